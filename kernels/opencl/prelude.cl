/* libmvision OpenCL prelude: maps the portable kernel dialect of kernels/common (*.h) onto
 * OpenCL C 1.2. mvision_kernels::source() prepends this, then the generated constants, then the
 * bodies. See kernels/SPEC.md for the macro contract; kernels/cuda/prelude.cuh is the twin. */

/* Float sums round after every multiply and every add, as the CPU reference does (OpenCL C
 * allows contracting a*b+c into one fma by default, which would change the last bits), unless
 * the host builds with -DMV_FP_CONTRACT=1: the filter program under MVISION_FILTER_FMA=on
 * (mvision_kernels::program_option_list), whose f32 results then stay within the contract's
 * tolerance instead of bit-identical. */
#if defined(MV_FP_CONTRACT) && MV_FP_CONTRACT
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif

#define MV_KERNEL __kernel void
/* A kernel whose work-group is exactly MV_TILE_W x MV_TILE_H (it sizes its local arrays so). */
#define MV_KERNEL_TILED \
    __kernel __attribute__((reqd_work_group_size(MV_TILE_W, MV_TILE_H, 1))) void
/* (CUDA: a register cap; OpenCL C has no such attribute.) */
#define MV_KERNEL_LEAN __kernel void
/* A kernel whose work-group is exactly MV_MMA_THREADS x 1 (the matrix-unit filter). */
#define MV_KERNEL_MMA __kernel __attribute__((reqd_work_group_size(MV_MMA_THREADS, 1, 1))) void
/* (CUDA: __grid_constant__ on by-value struct parameters.) */
#define MV_PARAM_CONST const
#define MV_GLOBAL __global
#define MV_CONSTANT __constant
#define MV_LOCAL __local
#define MV_LOCAL_ARRAY(type, name, n) __local type name[n]
#define MV_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
/* OpenCL C 1.2 allows `static` on non-kernel functions; plain C99 `inline` alone may leave an
 * undefined symbol when the compiler decides not to inline. */
#define MV_INLINE static inline

#define MV_GID_X ((int)get_global_id(0))
#define MV_GID_Y ((int)get_global_id(1))
#define MV_LID_X ((int)get_local_id(0))
#define MV_LID_Y ((int)get_local_id(1))
#define MV_GROUP_X ((int)get_group_id(0))
#define MV_GROUP_Y ((int)get_group_id(1))
#define MV_LSIZE_X ((int)get_local_size(0))
#define MV_LSIZE_Y ((int)get_local_size(1))

typedef uchar mv_u8;
typedef short mv_i16;
typedef ushort mv_u16;
typedef int mv_i32;
typedef uint mv_u32;
typedef long mv_i64;
typedef ulong mv_u64;

/* Vector types with members .x .y (.z .w), for aligned wide loads and stores: a pointer cast
 * to one of them must be aligned to its size. */
typedef uint2 mv_u32x2;
typedef uint4 mv_u32x4;
typedef float4 mv_f32x4;

/* Byte i (0 = lowest address) of a 32-bit word read from memory, and four bytes packed into the
 * word that stores them at increasing addresses. */
#ifdef __ENDIAN_LITTLE__
#define MV_BYTE(v, i) (((v) >> (8 * (i))) & 255u)
#define MV_PACK4(a, b, c, d) \
    ((mv_u32)(a) | ((mv_u32)(b) << 8) | ((mv_u32)(c) << 16) | ((mv_u32)(d) << 24))
#else
#define MV_BYTE(v, i) (((v) >> (24 - 8 * (i))) & 255u)
#define MV_PACK4(a, b, c, d) \
    ((mv_u32)(d) | ((mv_u32)(c) << 8) | ((mv_u32)(b) << 16) | ((mv_u32)(a) << 24))
#endif
/* Two bytes packed into the 16 bits that store them at increasing addresses. */
#ifdef __ENDIAN_LITTLE__
#define MV_PACK2(a, b) ((mv_u32)(a) | ((mv_u32)(b) << 8))
#define MV_LITTLE_ENDIAN 1
#else
#define MV_PACK2(a, b) ((mv_u32)(b) | ((mv_u32)(a) << 8))
#define MV_LITTLE_ENDIAN 0
#endif

/* Asks for a loop with a constant trip count to be unrolled completely. */
#define MV_UNROLL _Pragma("unroll")
/* Asks for a loop to stay a loop (code size: the streaming filters' border path). */
#define MV_NO_UNROLL _Pragma("unroll 1")

/* Warp shuffles, as the CUDA prelude's MV_SHFL_UP_<type>: OpenCL C 1.2 has none, but NVIDIA's
 * compiler takes PTX shfl.sync (-DMV_NV_PTX=1; a work-group's work-items 32k .. 32k + 31 are one
 * warp there). Elsewhere MV_HAS_SHFL is 0 and kernels take their local-memory paths; the
 * stand-ins are never called. */
#if defined(MV_NV_PTX) && MV_NV_PTX
#define MV_HAS_SHFL 1
MV_INLINE mv_u32 mv_shfl_up_u32(mv_u32 v, int d)
{
    mv_u32 r;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
    return r;
}
MV_INLINE mv_u64 mv_shfl_up_u64(mv_u64 v, int d)
{
    mv_u32 lo = mv_shfl_up_u32((mv_u32)v, d);
    mv_u32 hi = mv_shfl_up_u32((mv_u32)(v >> 32), d);
    return ((mv_u64)hi << 32) | lo;
}
#define MV_SHFL_UP_mv_u32(v, d) mv_shfl_up_u32((v), (d))
#define MV_SHFL_UP_mv_u64(v, d) mv_shfl_up_u64((v), (d))
#else
#define MV_HAS_SHFL 0
#define MV_SHFL_UP_mv_u32(v, d) (v)
#define MV_SHFL_UP_mv_u64(v, d) (v)
#endif

/* PTX dp2a for kernels/common/fixed_point.h's mv_dp2a_lo / mv_dp2a_hi where the host says the
 * device has it (-DMV_NV_PTX=1: NVIDIA's OpenCL compiler takes inline PTX); MV_DP2A_HW 1 then. */
#if defined(MV_NV_PTX) && MV_NV_PTX
#define MV_DP2A_HW 1
#else
#define MV_DP2A_HW 0
#endif

/* PTX mma.m16n8k16 with 8-bit integer operands for the matrix-unit filter
 * (kernels/common/filter.h) where the host says the device has it (-DMV_NV_MMA=1: NVIDIA,
 * compute capability 8.0 or later, whose OpenCL compiler takes inline PTX); MV_MMA_HW 1 then,
 * else that filter computes the same products from local memory. */
#if defined(MV_NV_MMA) && MV_NV_MMA
#define MV_MMA_HW 1
#else
#define MV_MMA_HW 0
#endif

/* Cross-work-group signalling, as the CUDA prelude's (the integral's look-back). OpenCL C 1.2
 * promises no ordering between work-groups; the host runs kernels that rely on it only on
 * devices where these give it (`plan::Limits::lookback`: NVIDIA, where MV_FENCE_GLOBAL is PTX
 * membar.gl, and CPU devices, whose caches are coherent), or when told to for tests. */
#define MV_ATOMIC_INC(p) atomic_inc(p)
#if defined(MV_NV_PTX) && MV_NV_PTX
#define MV_FENCE_GLOBAL() asm volatile("membar.gl;" ::: "memory")
#else
#define MV_FENCE_GLOBAL() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
#define MV_VLOAD(T, p) (*(volatile MV_GLOBAL T*)(p))
#define MV_VSTORE(T, p, v) (*(volatile MV_GLOBAL T*)(p) = (v))
#define MV_ATOMIC_MIN_LOCAL(p, v) atomic_min((p), (v))
#define MV_WARP_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
