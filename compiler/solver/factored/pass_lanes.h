#pragma once
// The CPU executor's pass tables: PassElement's values, bit for bit, sixteen
// z at a time. PassElement's sum is one chain of dependent adds per element
// (its order is the result's: no reassociation), so on the CPU it runs at
// the adder's latency; here sixteen elements' chains run side by side, each in
// its own order. The rounding has to match the code the compiler made of
// PassElement: its sums are vectorized in order (products rounded, then
// added left to right) except for the last (count mod 4) terms of each loop,
// which are fused multiply-adds. Checked against PassElement on every
// element (test/compiler/solver/pass_lanes_test.cc); built without FP
// contraction so that the products stay rounded where PassElement's are.
// Host only: the CUDA executor runs PassElement.
#include <cmath>
#include <cstddef>

// Only where the build's PassElement is what the rounding below follows
// (checked on GCC 12, -O3 -march=native, AVX-512 machines); elsewhere the
// CPU executor runs PassElement. The sanitizer builds (-O1) compile
// PassElement's sums in another order, so they run PassElement too; a build
// at -O2 (e.g. distribution flags) is not covered by this check: the pass
// lanes test tells.
#if defined(__AVX512F__) && defined(__FMA__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define LULL_PASS_LANES 1
#include <immintrin.h>
#else
#define LULL_PASS_LANES 0
#endif

#include "compiler/solver/factored/element_math.h"

namespace lull::compiler::factored {

#if LULL_PASS_LANES
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic push
// GCC 12's _mm512_permutexvar_pd passes an undefined vector on purpose (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

struct PassLanes {
  // Sixteen elements per call, two vectors of eight: each vector's sums are
  // one chain of dependent adds, so two independent chains keep the adder
  // busy while the other's result is pending.
  static constexpr int kLanes = 16;
  // Entries PassLanes may read beyond a px row's either end (the row buffer's padding).
  static constexpr int kPad = kLanes;
  Dims d;
  const double* px;
  const double* cdf;
  const double* sf;
  const int* xend;
  const int* ylen;
  double* pass;  // [t][z][col]

  int blocks() const { return (d.K + kLanes - 1) / kLanes; }
  // Calls: tables x cols x blocks.
  std::size_t count(int tables) const { return static_cast<std::size_t>(tables) * d.cols() * blocks(); }

  void operator()(std::size_t i) const {
    const int cols = d.cols(), nb = blocks();
    const int t = static_cast<int>(i / (static_cast<std::size_t>(cols) * nb));
    const int r = static_cast<int>(i % (static_cast<std::size_t>(cols) * nb));
    const int c = r / nb, z0 = (r % nb) * kLanes;
    const int lanes = d.K - z0 < kLanes ? d.K - z0 : kLanes;
    const std::size_t row = static_cast<std::size_t>(t) * d.span;
    const int K = d.K, N = d.N, full = (N + 1) * K, xe = xend[t];
    const double* w = px + row;
    const double* F = cdf + row;
    const double* S = sf + row;
    alignas(64) double acc[kLanes];
    // In u = z + x (arrivals since the worker's last query) every lane's
    // terms share their CDF factor; lane z reads w[u - z]. Loop 1 runs over
    // u in [K, end1), loop 2 over u in [start2, end2); fused from `fused`.
    // Lanes past K take part with empty ranges, so every loop is sixteen wide
    // and branch-free (the reads of an idle lane stay inside the padded row
    // buffer and are discarded).
    alignas(64) int end1[kLanes], fused1[kLanes], end2[kLanes], fused2[kLanes];
    const int start2 = c == N ? full : (c + 1) * K;
    int hi = K;
    for (int l = 0; l < kLanes; ++l) {
      const int z = z0 + l;
      if (l >= lanes) {
        end1[l] = fused1[l] = end2[l] = fused2[l] = 0;
        continue;
      }
      end1[l] = start2 < xe + z ? start2 : xe + z;
      const int n1 = end1[l] > K ? end1[l] - K : 0;
      fused1[l] = K + n1 - n1 % 4;
      end2[l] = c == N ? xe + z : ((c + 2) * K < xe + z ? (c + 2) * K : xe + z);
      const int n2 = end2[l] > start2 ? end2[l] - start2 : 0;
      fused2[l] = start2 + n2 - n2 % 4;
      hi = end2[l] > hi ? end2[l] : hi;
      hi = end1[l] > hi ? end1[l] : hi;
    }
    const int np = c + 1;
    const double* wz = w - z0;  // lane l reads wz[u - l]
    const int from2 = start2 > K ? start2 : K;
    // Lane l in vector lane l of a0, lane 8 + l in vector lane l of a1:
    // wz[u - 7 .. u] (wz[u - 15 .. u - 8]) loaded and reversed.
    const __m512i reverse = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i e1 = _mm512_load_si512(end1), f1 = _mm512_load_si512(fused1);
    const __m512i e2 = _mm512_load_si512(end2), f2 = _mm512_load_si512(fused2);
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    // One term into one vector: a rounded product added, or fused where the
    // lane's last count mod 4 terms are; the add and the fused multiply-add
    // both start from the old sum, so the chain is one of them and a blend.
    auto term = [](__m512d a, __m512d wx, __m512d fv, __mmask8 live, __mmask8 fma_lanes) {
      const __m512d added = _mm512_mask_add_pd(a, live & ~fma_lanes, a, _mm512_mul_pd(wx, fv));
      return _mm512_mask_mov_pd(added, fma_lanes, _mm512_fmadd_pd(wx, fv, a));
    };
    auto step = [&](int u, double f, __m512i end, __m512i fused) {
      const __m512i uu = _mm512_set1_epi32(u);
      const __mmask16 live = _mm512_cmplt_epi32_mask(uu, end);
      const __mmask16 fma_lanes = live & _mm512_cmpge_epi32_mask(uu, fused);
      const __m512d fv = _mm512_set1_pd(f);
      a0 = term(a0, _mm512_permutexvar_pd(reverse, _mm512_loadu_pd(wz + u - 7)), fv, static_cast<__mmask8>(live),
                static_cast<__mmask8>(fma_lanes));
      a1 = term(a1, _mm512_permutexvar_pd(reverse, _mm512_loadu_pd(wz + u - 15)), fv, static_cast<__mmask8>(live >> 8),
                static_cast<__mmask8>(fma_lanes >> 8));
    };
    for (int u = K; u < start2 && u < hi; ++u)
      step(u, c == N ? S[full - u] : F[np * K + K - 1 - u] - F[np * K - 1 - u], e1, f1);
    if (c == N) {
      for (int u = from2; u < hi; ++u) {
        const __mmask16 live = _mm512_cmplt_epi32_mask(_mm512_set1_epi32(u), e2);
        a0 = _mm512_mask_add_pd(a0, static_cast<__mmask8>(live), a0,
                                _mm512_permutexvar_pd(reverse, _mm512_loadu_pd(wz + u - 7)));
        a1 = _mm512_mask_add_pd(a1, static_cast<__mmask8>(live >> 8), a1,
                                _mm512_permutexvar_pd(reverse, _mm512_loadu_pd(wz + u - 15)));
      }
    } else {
      for (int u = from2; u < hi; ++u) step(u, F[np * K + K - 1 - u], e2, f2);
    }
    _mm512_store_pd(acc, a0);
    _mm512_store_pd(acc + 8, a1);
    for (int l = 0; l < lanes; ++l)
      pass[static_cast<std::size_t>(t) * d.pass_size() + static_cast<std::size_t>(z0 + l) * cols + c] = acc[l];
  }
};

#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

}  // namespace lull::compiler::factored
