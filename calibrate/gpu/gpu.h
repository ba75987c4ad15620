/* gpu.h - the thin macro layer that lets one kernel source build with nvcc
 * (CUDA) or hipcc (HIP).
 *
 * Section 4.2 item 4 of shared/research/energy-and-calibration.md: one C/C++
 * source through gpuMalloc / gpuEvent* / warp-size macros, with arch-specific
 * blocks only for tensor instructions (mma.sync on sm_80/sm_90, MFMA on
 * gfx90a) and vendor libraries (NVML vs ROCm SMI, opened at run time by
 * harness/power.c).  gpu-benches does the same with hipify-clean CUDA; here
 * the mapping is explicit so nothing is translated at build time.
 */
#ifndef PFCAL_GPU_H
#define PFCAL_GPU_H

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#define PFCAL_GPU_BACKEND "hip"
#define PFCAL_GPU_VENDOR "amd"
#define PFCAL_POWER_SOURCE "rsmi"
#define PFCAL_DRIVER_LIB "libamdhip64.so (ROCm HIP runtime) and the amdgpu kernel driver (/dev/kfd)"
#define PFCAL_WARP 64

typedef hipError_t gpuError_t;
typedef hipEvent_t gpuEvent_t;
typedef hipStream_t gpuStream_t;
typedef hipDeviceProp_t gpuDeviceProp;
#define gpuSuccess hipSuccess
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDeviceGetPCIBusId hipDeviceGetPCIBusId
#define gpuAttrClockRate hipDeviceAttributeClockRate
#define gpuAttrMemoryClockRate hipDeviceAttributeMemoryClockRate
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuSetDevice hipSetDevice
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define gpuMemGetInfo hipMemGetInfo
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocHost(p, n) hipHostMalloc((p), (n), 0)
#define gpuFreeHost hipHostFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyPeerAsync hipMemcpyPeerAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuMemset hipMemset
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuStreamCreate hipStreamCreate
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define gpuErrorInvalidValue hipErrorInvalidValue

#else /* CUDA */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define PFCAL_GPU_BACKEND "cuda"
#define PFCAL_GPU_VENDOR "nvidia"
#define PFCAL_POWER_SOURCE "nvml"
#define PFCAL_DRIVER_LIB "libcuda.so.1 (NVIDIA driver)"
#define PFCAL_WARP 32

typedef cudaError_t gpuError_t;
typedef cudaEvent_t gpuEvent_t;
typedef cudaStream_t gpuStream_t;
typedef cudaDeviceProp gpuDeviceProp;
#define gpuSuccess cudaSuccess
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDeviceGetPCIBusId cudaDeviceGetPCIBusId
#define gpuAttrClockRate cudaDevAttrClockRate
#define gpuAttrMemoryClockRate cudaDevAttrMemoryClockRate
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuSetDevice cudaSetDevice
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define gpuMemGetInfo cudaMemGetInfo
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocHost(p, n) cudaMallocHost((p), (n))
#define gpuFreeHost cudaFreeHost
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyPeerAsync cudaMemcpyPeerAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuMemset cudaMemset
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuStreamCreate cudaStreamCreate
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define gpuErrorInvalidValue cudaErrorInvalidValue
#endif

/* Tensor paths compiled into this binary's device code. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define PFCAL_MMA_SM80 1
#endif
/* fp8 mma.sync only where it is a hardware instruction: sm_89 (Ada, QMMA).
 * On sm_90 the PTX instruction exists but ptxas emulates it (an f16 HMMA of
 * the converted operands plus fp32 adds into the accumulator); with operands
 * that do not change inside the timing loop the product is computed once
 * outside it and the loop is only the adds, which is how the first H100 run
 * reported 2332 TFLOP/s, above the 1979 dense peak (docs/calibration.md).
 * Hopper's fp8 ceiling comes from the library GEMM (--gemm: cuBLASLt, wgmma). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890 && __CUDA_ARCH__ < 900
#define PFCAL_MMA_FP8 1
#endif
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define PFCAL_MFMA_CDNA2 1
#endif

/* A 64-bit xor-shift-multiply mixing function (the shape of SplitMix64's finaliser): element i's
 * input data from (i, seed), so every kernel's data are random-like and reproducible from --seed. */
static __device__ __forceinline__ unsigned long long pfcal_mix64(unsigned long long x) {
  x ^= x >> 31;
  x *= 0x7FB5D329728EA185ull;
  x ^= x >> 27;
  x *= 0x81DADEF4BC2DD44Dull;
  x ^= x >> 33;
  return x;
}

#endif
