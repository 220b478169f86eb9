// libmvision from C++17: the C header used as is (its extern "C" guard gives the functions C
// linkage), with a small RAII wrapper for mv_context and std::vector buffers for images.
#include <mvision.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

// In C++ the header declares mv_status as an enum with a fixed uint32_t underlying type.
static_assert(std::is_enum<mv_status>::value, "mv_status is an enum in C++");
static_assert(std::is_same<std::underlying_type<mv_status>::type, std::uint32_t>::value,
              "mv_status has the ABI of uint32_t");

namespace mv {

class error : public std::runtime_error {
public:
    error(const char* what, mv_status status)
        : std::runtime_error(std::string(what) + ": " + mv_status_name(status) + " (" +
                             mv_status_description(status) + ")"),
          status_(status) {}
    mv_status status() const noexcept { return status_; }

private:
    mv_status status_;
};

inline void check(mv_status status, const char* what) {
    if (status != MV_STATUS_OK) throw error(what, status);
}

// Owns an mv_context; mv_context_destroy runs exactly once.
class context {
public:
    explicit context(mv_backend backends) {
        mv_context* raw = nullptr;
        check(mv_context_create(backends, &raw), "mv_context_create");
        handle_.reset(raw);
    }
    mv_backend backends() const {
        mv_backend b = 0;
        check(mv_context_backends(handle_.get(), &b), "mv_context_backends");
        return b;
    }
    mv_context* get() const noexcept { return handle_.get(); }

private:
    struct deleter {
        void operator()(mv_context* c) const noexcept { mv_context_destroy(c); }
    };
    std::unique_ptr<mv_context, deleter> handle_;
};

// A tightly packed single-channel image whose pixels live in a std::vector.
template <typename T, mv_pixel_format Format>
class image {
public:
    image(std::uint32_t width, std::uint32_t height, T fill = T())
        : pixels_(std::size_t(width) * height, fill) {
        check(mv_image_init(pixels_.data(), pixels_.size() * sizeof(T), width, height, 0, Format,
                            &desc_),
              "mv_image_init");
    }
    const mv_image* desc() const noexcept { return &desc_; }
    std::uint32_t width() const noexcept { return desc_.width; }
    std::uint32_t height() const noexcept { return desc_.height; }
    T& at(std::uint32_t x, std::uint32_t y) { return pixels_[std::size_t(y) * width() + x]; }
    const T& at(std::uint32_t x, std::uint32_t y) const {
        return pixels_[std::size_t(y) * width() + x];
    }

private:
    std::vector<T> pixels_;
    mv_image desc_{};
};

using image_u8 = image<std::uint8_t, MV_PIXEL_U8>;
using image_f32 = image<float, MV_PIXEL_F32>;

}  // namespace mv

int main() {
    try {
        std::printf("libmvision %s (header %s)\n", mv_version(), MV_VERSION_STRING);
        if (mv_version_number() != MV_VERSION_NUMBER) {
            std::fprintf(stderr, "header/library version mismatch\n");
            return 1;
        }
        mv::context ctx(MV_BACKEND_CPU);
        std::printf("context backends: 0x%x\n", unsigned(ctx.backends()));

        // A checkerboard of 8 x 8 cells.
        mv::image_u8 src(64, 48);
        for (std::uint32_t y = 0; y < src.height(); ++y)
            for (std::uint32_t x = 0; x < src.width(); ++x)
                src.at(x, y) = ((x / 8 + y / 8) % 2) ? 200 : 40;

        const mv_border reflect{MV_BORDER_REFLECT_101, 0.0f};

        mv::image_u8 boxed(src.width(), src.height());
        mv::check(mv_box_blur(src.desc(), boxed.desc(), 3, reflect), "mv_box_blur");

        std::uint32_t pw = 0, ph = 0;
        mv::check(mv_pyr_down_size(src.width(), src.height(), &pw, &ph), "mv_pyr_down_size");
        mv::image_u8 half(pw, ph);
        mv::check(mv_pyr_down(src.desc(), half.desc(), reflect), "mv_pyr_down");

        mv::image_u8 big(128, 96);
        mv::check(mv_resize_bilinear(src.desc(), big.desc()), "mv_resize_bilinear");

        // Float path: Sobel and gradient polar form of the checkerboard.
        mv::image_f32 srcf(src.width(), src.height());
        for (std::uint32_t y = 0; y < src.height(); ++y)
            for (std::uint32_t x = 0; x < src.width(); ++x) srcf.at(x, y) = src.at(x, y);
        mv::image_f32 dx(src.width(), src.height()), dy(src.width(), src.height());
        mv::image_f32 mag(src.width(), src.height()), ang(src.width(), src.height());
        mv::check(mv_sobel(srcf.desc(), dx.desc(), dy.desc(), reflect), "mv_sobel");
        mv::check(mv_gradient_polar(dx.desc(), dy.desc(), mag.desc(), ang.desc()),
                  "mv_gradient_polar");

        std::printf("box 3x3: centre of a cell %u, on an edge %u\n", unsigned(boxed.at(4, 4)),
                    unsigned(boxed.at(8, 4)));
        std::printf("pyr_down %ux%u: %u; resize 128x96: %u\n", pw, ph, unsigned(half.at(2, 2)),
                    unsigned(big.at(8, 8)));
        std::printf("sobel f32 at (8,4): dx %.1f dy %.1f |g| %.1f\n", double(dx.at(8, 4)),
                    double(dy.at(8, 4)), double(mag.at(8, 4)));

        // The C++ wrapper reports errors as exceptions carrying the status.
        try {
            mv::context bad(0);
            std::fprintf(stderr, "mv_context_create(0) unexpectedly succeeded\n");
            return 1;
        } catch (const mv::error& e) {
            std::printf("expected error: %s\n", e.what());
            if (e.status() != MV_STATUS_INVALID_ARGUMENT) return 1;
        }

        // Checks: flat regions stay flat; edge of a cell: right minus left = 4 x 160.
        if (boxed.at(4, 4) != 40 || half.at(2, 2) != 40 || dx.at(8, 4) != 640.0f) {
            std::fprintf(stderr, "unexpected results\n");
            return 1;
        }
        std::printf("example_cpp: OK\n");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
