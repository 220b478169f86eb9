/* libmvision CUDA prelude: maps the portable kernel dialect of kernels/common (*.h) onto CUDA C++
 * as NVRTC compiles it (no system headers: only built-in types and keywords are used).
 * mvision_kernels::source() prepends this, then the generated constants, then the bodies. See
 * kernels/SPEC.md for the macro contract; kernels/opencl/prelude.cl is the twin.
 *
 * Float sums must round after every multiply and every add, as the CPU reference does: compile
 * with NVRTC's `--fmad=false` (mvision_kernels::build_option_list(tile, Backend::Cuda) adds it),
 * otherwise a*b+c may become one fma and the last bits differ from the CPU. */

/* Kernel names stay unmangled so the driver finds them by the names in kernels/SPEC.md. */
#define MV_KERNEL extern "C" __global__ void
/* A kernel whose block is exactly MV_TILE_W x MV_TILE_H (it sizes its shared arrays so). */
#define MV_KERNEL_TILED extern "C" __global__ void __launch_bounds__(MV_TILE_W * MV_TILE_H)
/* A kernel of no fixed work-group shape that asks for at most 64 registers per thread (so that
 * 2048 threads fit an SM) when run in work-groups of the tile's size. */
#define MV_KERNEL_LEAN                                                         \
    extern "C" __global__ void __launch_bounds__(                            \
        MV_TILE_W * MV_TILE_H,                                               \
        (1024 / (MV_TILE_W * MV_TILE_H) > 0 ? 1024 / (MV_TILE_W * MV_TILE_H) : 1))
/* A kernel whose block is exactly MV_MMA_THREADS threads (the matrix-unit filter). */
#define MV_KERNEL_MMA extern "C" __global__ void __launch_bounds__(MV_MMA_THREADS)
/* A by-value struct parameter whose address the kernel takes (filter coefficients): read in
 * place from the constant bank (__grid_constant__, CUDA 11.7+ on sm_70+) instead of copied
 * to each thread's stack; older NVRTC (JetPack 5 has 11.4) copies it. -DMV_NO_GRID_CONSTANT
 * takes the older path with any NVRTC (CI compiles it so, as no NVRTC 11.4 wheel exists). */
#if !defined(MV_NO_GRID_CONSTANT) && defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 11 || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 7))
#define MV_PARAM_CONST const __grid_constant__
#else
#define MV_PARAM_CONST const
#endif
/* Filter coefficients are kernel parameters (kernels/common/filter.h): CUDA devices take 4 KiB
 * of them. */
#define MV_TAPS_BY_VALUE 1
/* The look-back integral keeps its tile's pixels in shared memory between its phases and reads
 * the earlier tiles' sums 8 at a time (kernels/common/integral.h): 1.13x at 1080p on the H200
 * with CUDA, 0.95x with NVIDIA's OpenCL, which keeps the default (0). */
#define MV_LB_STASH 1
#define MV_GLOBAL
#define MV_CONSTANT const
#define MV_LOCAL
#define MV_LOCAL_ARRAY(type, name, n) __shared__ type name[n]
#define MV_BARRIER() __syncthreads()
#define MV_INLINE static __device__ __forceinline__

#define MV_GID_X ((int)(blockIdx.x * blockDim.x + threadIdx.x))
#define MV_GID_Y ((int)(blockIdx.y * blockDim.y + threadIdx.y))
#define MV_LID_X ((int)threadIdx.x)
#define MV_LID_Y ((int)threadIdx.y)
#define MV_GROUP_X ((int)blockIdx.x)
#define MV_GROUP_Y ((int)blockIdx.y)
#define MV_LSIZE_X ((int)blockDim.x)
#define MV_LSIZE_Y ((int)blockDim.y)

typedef unsigned char mv_u8;
typedef short mv_i16;
typedef unsigned short mv_u16;
typedef int mv_i32;
typedef unsigned int mv_u32;
typedef long long mv_i64;
typedef unsigned long long mv_u64;

/* Vector types with members .x .y (.z .w), for aligned wide loads and stores: a pointer cast
 * to one of them must be aligned to its size. Declared here (NVRTC has no headers). */
struct alignas(8) mv_u32x2 {
    unsigned int x, y;
};
struct alignas(16) mv_u32x4 {
    unsigned int x, y, z, w;
};
struct alignas(16) mv_f32x4 {
    float x, y, z, w;
};

/* Byte i (0 = lowest address) of a 32-bit word read from memory, and four bytes packed into the
 * word that stores them at increasing addresses (CUDA devices are little-endian). */
#define MV_BYTE(v, i) (((v) >> (8 * (i))) & 255u)
#define MV_PACK4(a, b, c, d) \
    ((mv_u32)(a) | ((mv_u32)(b) << 8) | ((mv_u32)(c) << 16) | ((mv_u32)(d) << 24))
/* Two bytes packed into the 16 bits that store them at increasing addresses. */
#define MV_PACK2(a, b) ((mv_u32)(a) | ((mv_u32)(b) << 8))
#define MV_LITTLE_ENDIAN 1

/* Asks for a loop with a constant trip count to be unrolled completely (MV_UNROLL), or for a
 * loop to stay a loop (MV_NO_UNROLL: code size); only NVRTC is asked: the host compiler that
 * checks these sources would warn about the pragma. */
#ifdef __CUDACC__
#define MV_UNROLL _Pragma("unroll")
#define MV_NO_UNROLL _Pragma("unroll 1")
#else
#define MV_UNROLL
#define MV_NO_UNROLL
#endif

/* Warp shuffles (MV_HAS_SHFL 1): MV_SHFL_UP_mv_u32(v, d) / MV_SHFL_UP_mv_u64(v, d) is v of the
 * lane d below in the same warp of 32 (its own v in lanes < d), all 32 lanes taking part (the
 * type in the name, so that kernels can paste it). The host compiler that checks these sources
 * gets the OpenCL prelude's stand-in. */
#ifdef __CUDACC__
#define MV_HAS_SHFL 1
#define MV_SHFL_UP_mv_u32(v, d) __shfl_up_sync(0xffffffffu, (v), (d))
#define MV_SHFL_UP_mv_u64(v, d) __shfl_up_sync(0xffffffffu, (v), (d))
#else
#define MV_HAS_SHFL 0
#define MV_SHFL_UP_mv_u32(v, d) (v)
#define MV_SHFL_UP_mv_u64(v, d) (v)
#endif

/* PTX dp2a (sm_61 and later) for kernels/common/fixed_point.h's mv_dp2a_lo / mv_dp2a_hi:
 * MV_DP2A_HW 1 where the instruction is used. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610
#define MV_DP2A_HW 1
#else
#define MV_DP2A_HW 0
#endif

/* PTX mma.m16n8k16 with 8-bit integer operands (sm_80 and later) for the matrix-unit filter
 * (kernels/common/filter.h): MV_MMA_HW 1 where it is used, else that filter computes the same
 * products from local memory. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define MV_MMA_HW 1
#else
#define MV_MMA_HW 0
#endif

/* Cross-work-group signalling, for kernels whose work-groups wait on earlier ones (the integral's
 * look-back): MV_ATOMIC_INC(p) returns the old value of the u32 at p and adds 1 (device-wide);
 * MV_FENCE_GLOBAL() orders this work-item's global loads and stores device-wide; MV_VLOAD /
 * MV_VSTORE read and write through to the device's coherent cache (volatile), so values another
 * work-group stored after its fence are seen. */
#define MV_ATOMIC_INC(p) atomicAdd((p), 1u)
#define MV_FENCE_GLOBAL() __threadfence()
#define MV_VLOAD(T, p) (*(volatile T*)(p))
#define MV_VSTORE(T, p, v) (*(volatile T*)(p) = (v))
/* MV_ATOMIC_MIN_LOCAL(p, v): *p = min(*p, v) on an int in local (shared) memory. */
#define MV_ATOMIC_MIN_LOCAL(p, v) atomicMin((p), (v))
/* Orders local memory among the 32 work-items of a warp (work-items lid / 32 alike): CUDA's
 * __syncwarp; OpenCL has no such scope and takes a work-group barrier (every work-item must
 * reach it). */
#define MV_WARP_BARRIER() __syncwarp()
