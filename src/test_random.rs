//! A seeded pseudo-random stream for unit tests (Knuth's MMIX linear congruential generator): the
//! same numbers on every machine, with no dependency.

/// Advances `seed` and returns its new state.
pub(crate) fn next(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed
}

/// Uniform in [0, 1): the state's top 24 bits.
pub(crate) fn unit(seed: &mut u64) -> f32 {
    (next(seed) >> 40) as f32 / (1u64 << 24) as f32
}
