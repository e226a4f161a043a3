#pragma once
// LULL_HD marks a function that both the host compiler and nvcc compile, for
// the host and for CUDA device code: the factored solver's math
// (compiler/solver/factored) and the few MDP helpers it calls (state
// indexing, Poisson pmf) are written once and run by the CPU and the CUDA
// executors. Such functions use no std:: calls and no CUDA types.
#ifdef __CUDACC__
#define LULL_HD __host__ __device__
#else
#define LULL_HD
#endif
