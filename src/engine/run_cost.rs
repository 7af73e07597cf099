//! What one item of a batch (a tile, a prompt) costs in ONNX Runtime's working memory, measured, so
//! that a call's batches fit its `max_memory_bytes` budget.
//!
//! ONNX Runtime allocates a run's activations in its arena, and they grow with the batch: a
//! 256x256 UNet tile costs some 33 MB there, so 64 tiles in one run take 2 GB that segrt's own
//! buffers never show. There is no way to ask ONNX Runtime beforehand (its allocator statistics need
//! API level 23; segrt calls 21), so the first run of a model at an input size is one item, measured
//! as the growth of the process's resident memory from an arena emptied of unused blocks; later runs
//! size their batches from that figure. Other threads' work during that one run blurs the figure
//! (more often upwards: their allocations count too).

use std::collections::HashMap;
use std::sync::Mutex;

use super::arena;
use super::memory::resident_bytes;
use crate::alloc::size_text;
use crate::error::{Error, ErrorKind, Result};

/// Measured bytes per batch item, by the model input's (width, height); (0, 0) for models whose
/// items do not depend on an image size (a SAM2 decoder's prompts).
#[derive(Default)]
pub struct RunCosts {
    per_item: Mutex<HashMap<(usize, usize), u64>>,
}

/// How many items the next run of a call may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    /// This many (at least 1), from the measured cost.
    Sized(usize),
    /// One, measured: nothing is known of this input size yet.
    Measure,
}

/// What a call's batches must fit: the budget, the call's own buffers that do not depend on the batch,
/// and its own buffers per item.
#[derive(Debug, Clone, Copy)]
pub struct Budget<'a> {
    pub max_memory_bytes: u64,
    pub fixed_bytes: u64,
    pub own_bytes_per_item: u64,
    /// "tile", "prompt": for messages.
    pub item: &'a str,
}

impl RunCosts {
    /// The measured cost of one item at `size`, if a run measured it.
    pub fn per_item(&self, size: (usize, usize)) -> Option<u64> {
        self.per_item.lock().unwrap_or_else(|p| p.into_inner()).get(&size).copied()
    }

    /// Every measured cost, by input size ("256x256"; "prompt" for (0, 0)).
    pub fn measured(&self) -> std::collections::BTreeMap<String, u64> {
        let per_item = self.per_item.lock().unwrap_or_else(|p| p.into_inner());
        per_item.iter().map(|((w, h), b)| (if (*w, *h) == (0, 0) { "prompt".to_string() } else { format!("{w}x{h}") }, *b)).collect()
    }

    /// The batch for the next run at `size`: at most `wanted` items, as many as fit the budget with
    /// the measured cost. `OutOfMemory`, with the figures, when not even one item fits.
    pub fn batch(&self, size: (usize, usize), wanted: usize, budget: &Budget<'_>) -> Result<Batch> {
        let Some(ort) = self.per_item(size) else { return Ok(Batch::Measure) };
        let per_item = ort + budget.own_bytes_per_item;
        let room = budget.max_memory_bytes.saturating_sub(budget.fixed_bytes);
        let fits = room.checked_div(per_item).unwrap_or(u64::MAX);
        if fits == 0 {
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "one {item}{at} needs {} in ONNX Runtime (measured) and {} of segrt's buffers, beside {} for the whole call: \
                     more than the max_memory_bytes budget of {}; raise it",
                    size_text(ort),
                    size_text(budget.own_bytes_per_item),
                    size_text(budget.fixed_bytes),
                    size_text(budget.max_memory_bytes),
                    item = budget.item,
                    at = if size == (0, 0) { String::new() } else { format!(" at {}x{}", size.0, size.1) },
                ),
            ));
        }
        Ok(Batch::Sized(wanted.max(1).min(usize::try_from(fits).unwrap_or(usize::MAX))))
    }

    /// Runs `run` (one run of `items` items at `size`) and records what it made the process hold,
    /// per item, from an arena first emptied of the blocks no tensor uses.
    pub fn measure<T>(&self, size: (usize, usize), items: usize, run: impl FnOnce() -> Result<T>) -> Result<T> {
        arena::release_unused();
        arena::trim_malloc();
        let before = resident_bytes();
        let out = run()?;
        if let (Some(before), Some(after)) = (before, resident_bytes()) {
            let per_item = after.saturating_sub(before) / items.max(1) as u64;
            self.per_item.lock().unwrap_or_else(|p| p.into_inner()).insert(size, per_item);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(max: u64) -> Budget<'static> {
        Budget { max_memory_bytes: max, fixed_bytes: 100, own_bytes_per_item: 10, item: "tile" }
    }

    #[test]
    fn batches_fit_the_budget_once_a_run_was_measured() {
        let costs = RunCosts::default();
        assert_eq!(costs.batch((8, 8), 64, &budget(1000)).unwrap(), Batch::Measure);
        costs.per_item.lock().unwrap().insert((8, 8), 90);
        // (1000 - 100) / (90 + 10) = 9 items fit; fewer wanted, fewer given.
        assert_eq!(costs.batch((8, 8), 64, &budget(1000)).unwrap(), Batch::Sized(9));
        assert_eq!(costs.batch((8, 8), 4, &budget(1000)).unwrap(), Batch::Sized(4));
        // Another size is measured anew.
        assert_eq!(costs.batch((16, 8), 4, &budget(1000)).unwrap(), Batch::Measure);
        let e = costs.batch((8, 8), 4, &budget(150)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfMemory);
        assert!(e.message.contains("one tile at 8x8 needs 90 bytes in ONNX Runtime"), "{}", e.message);
    }
}
