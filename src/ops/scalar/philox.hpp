// Theon's random numbers, written once for the CPU loop (backends/cpu/random_cpu.cpp) and
// every CUDA kernel (backends/cuda/random_cuda.cpp pastes this header's text, embedded at
// build time as reduce_ops.hpp is), so both devices compute the same bits.
//
// The generator is Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11; Random123's philox4x32_10): a counter-based generator, so element i of a draw
// is a pure function of
//   key     = (seed, stream index)      the seed in the state; the random variable's
//                                       creation index in its RandomStreams
//   counter = (block of i, call count)  64 bits each: the element's block of 4 words and
//                                       the calls made so far (held in the state)
// never of the thread, launch shape, device or graph node that computes it.
//
// The transforms use only integer operations and IEEE double +, -, *, / and sqrt (correctly
// rounded on every device; kernels compile without FMA contraction), never libm or
// libdevice, whose log, sin and cos differ by an ulp between devices. So uniform AND normal
// draws are bit-identical on the CPU and the GPU.
#pragma once
#include "scalar_ops.hpp"

namespace theon::random {

/// Four 32-bit words: a Philox counter or output block.
struct Block {
  uint32_t w[4];
};

/// 32x32 -> 64-bit product, split.
THEON_HD void mulhilo32(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

/// Philox4x32 with 10 rounds: Random123's philox4x32_10(ctr, key), checked against its
/// known-answer vectors (tests/cpp/ops/random_test.cpp).
THEON_HD Block philox4x32_10(Block ctr, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;  // the key schedule's Weyl sequence (golden ratio, sqrt(3) - 1)
      k1 += 0xBB67AE85u;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo32(0xD2511F53u, ctr.w[0], hi0, lo0);
    mulhilo32(0xCD9E8D57u, ctr.w[2], hi1, lo1);
    const Block next = {{hi1 ^ ctr.w[1] ^ k0, lo1, hi0 ^ ctr.w[3] ^ k1, lo0}};
    ctr = next;
  }
  return ctr;
}

/// The block `block` of a draw: key (seed, stream), counter (block, call).
THEON_HD Block draw_block(uint32_t seed, uint32_t stream, uint64_t call, uint64_t block) {
  const Block ctr = {{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), static_cast<uint32_t>(call),
                      static_cast<uint32_t>(call >> 32)}};
  return philox4x32_10(ctr, seed, stream);
}

/// float32 uniform in (0, 1) from a word's top 23 bits: (2k + 1) / 2^24, exact, never 0 or 1.
THEON_HD float uniform_float32(uint32_t w) { return (static_cast<float>(w >> 9) + 0.5f) * 0x1p-23f; }

/// float64 uniform in (0, 1) from the top 52 bits of (hi, lo): (2k + 1) / 2^53, exact.
THEON_HD double uniform_float64(uint32_t hi, uint32_t lo) {
  const uint64_t k = ((static_cast<uint64_t>(hi) << 32) | lo) >> 12;
  return (static_cast<double>(k) + 0.5) * 0x1p-52;
}

/// log(n / 2^53) for an integer 1 <= n <= 2^53, with basic IEEE operations only (a few ulp):
/// n = m * 2^e with m in [sqrt(1/2), sqrt(2)], log(m) = 2 atanh(s), s = (m - 1) / (m + 1),
/// |s| <= 0.1716, summed to s^23 (the next term is below 2^-56 of the sum).
THEON_HD double log_of_53bit_fraction(uint64_t n) {
  if (n >> 53) return 0.0;  // n = 2^53
  int e = 0;
  for (int step = 32; step > 0; step >>= 1)
    if ((n >> (e + step)) != 0) e += step;                      // n in [2^e, 2^(e+1))
  double m = static_cast<double>(n << (52 - e)) * 0x1p-52;  // n / 2^e in [1, 2), exact
  if (m > 1.4142135623730951) {
    m *= 0.5;  // exact
    ++e;
  }
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double p = 1.0 / 23.0;
  for (int k = 21; k >= 1; k -= 2) p = p * s2 + 1.0 / k;
  const double log_m = 2.0 * s * p;
  const double ln2_hi = 0x1.62e42fee00000p-1;  // trailing zeros: (e - 53) * ln2_hi is exact
  const double ln2_lo = 0x1.a39ef35793c76p-33;
  const double k2 = static_cast<double>(e - 53);
  return k2 * ln2_hi + (k2 * ln2_lo + log_m);
}

/// cos and sin of 2 pi (w + 1/2) / 2^32: the top 2 bits pick the quadrant (exact), the rest
/// an angle a in (0, pi/2) whose Taylor series (to a^24, terms below 2^-60) gives both.
THEON_HD void cos_sin_of_turn(uint32_t w, double& c, double& s) {
  const double a = (static_cast<double>(w & 0x3fffffffu) + 0.5) * 0x1p-30 * 1.5707963267948966;
  const double a2 = a * a;
  double pc = 1.0, ps = 1.0;
  // cos a = 1 - a^2/2! + ..., sin a = a (1 - a^2/3! + ...), by Horner from the last term.
  for (int k = 24; k >= 2; k -= 2) pc = 1.0 - pc * a2 / (k * (k - 1));
  for (int k = 25; k >= 3; k -= 2) ps = 1.0 - ps * a2 / (k * (k - 1));
  const double ca = pc, sa = a * ps;
  switch (w >> 30) {
    case 0: c = ca, s = sa; break;
    case 1: c = -sa, s = ca; break;
    case 2: c = -ca, s = -sa; break;
    default: c = sa, s = -ca; break;
  }
}

/// A standard normal pair by Box-Muller from one block: radius from words 0-1 (53 bits, so
/// |z| <= 8.57), angle from word 2; `second` picks sin over cos.
THEON_HD double normal_of_block(const Block& b, bool second) {
  const uint64_t n = (((static_cast<uint64_t>(b.w[0]) << 32) | b.w[1]) >> 11) + 1;  // 1 .. 2^53
  const double r = std::sqrt(-2.0 * log_of_53bit_fraction(n));
  double c, s;
  cos_sin_of_turn(b.w[2], c, s);
  return r * (second ? s : c);
}

/// The distributions a RandomDraw op computes (ops/random.hpp); parameters (low, high, mean,
/// std, p) are applied by ordinary elementwise ops on these.
enum class Distribution { Uniform = 0, Normal = 1 };

/// Elements per Philox block of a draw: float32 uniforms use one word each, float64
/// uniforms two, normals a block per pair.
THEON_HD int per_block(Distribution d, bool float64) { return d == Distribution::Uniform && !float64 ? 4 : 2; }

/// Element i of a draw, given its block (draw_block(..., i / per_block)) and j = i % per_block.
template <class T>
THEON_HD T draw_element(Distribution d, const Block& b, int j) {
  constexpr bool f64 = std::is_same_v<T, double>;
  if (d == Distribution::Normal) return static_cast<T>(normal_of_block(b, j == 1));
  if constexpr (f64) return uniform_float64(b.w[2 * j], b.w[2 * j + 1]);
  else return uniform_float32(b.w[j]);
}

}  // namespace theon::random
