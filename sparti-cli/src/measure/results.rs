//! What a measurement is asked for ([`Timing`]) and what it gives
//! ([`Run`]): every frame's time, pair count and fingerprints, and where
//! two runs first disagree.

use std::time::Duration;

/// How many frames to run and measure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Frames run before measuring (the first one builds the tree).
    pub warm_up: usize,
    /// Measure at least this many frames...
    pub min_frames: usize,
    /// ... and keep measuring until they add up to this long ...
    pub min_time: Duration,
    /// ... but never more frames than this.
    pub max_frames: usize,
}

/// What one structure did on one workload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    /// Seconds per measured frame.
    pub seconds: Vec<f64>,
    /// Pair tests ([`sparti::Counters::pair_tests`]) per measured frame.
    pub pair_tests: Vec<u64>,
    /// Live objects per measured frame.
    pub objects: Vec<usize>,
    /// Pairs found in every frame, warm-up included.
    pub pairs: Vec<usize>,
    /// An order-independent fingerprint of every frame's pairs (of slots).
    pub fingerprints: Vec<u64>,
    /// Seconds spent in the queries, per measured frame (a part of
    /// `seconds`; empty when the workload has no queries).
    pub query_seconds: Vec<f64>,
    /// A fingerprint of every frame's query results (0 without queries).
    pub query_fingerprints: Vec<u64>,
}

/// Where two runs first disagree ([`Run::first_difference`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The frame, 0-based, warm-up included.
    pub frame: usize,
    /// Pairs found by the run and by the reference in that frame.
    pub pairs: (usize, usize),
    /// True when the pairs agree and the query results do not.
    pub in_queries: bool,
}

impl Difference {
    /// What differs, for a message: `"{got} pairs, {reference} {want}"` or
    /// the query results.
    pub fn describe(&self, reference: &str) -> String {
        let (got, want) = self.pairs;
        if self.in_queries {
            format!("the same {got} pairs, but other query results than {reference}")
        } else if got == want {
            format!("{got} pairs, {reference} {want} (same count, different pairs)")
        } else {
            format!("{got} pairs, {reference} {want}")
        }
    }
}

/// The median of some numbers (0 when there are none).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

impl Run {
    /// Median milliseconds per frame.
    pub fn median_ms(&self) -> f64 {
        median(&self.seconds) * 1e3
    }

    /// Mean pair tests per measured frame.
    pub fn mean_pair_tests(&self) -> f64 {
        mean(self.pair_tests.iter().map(|&t| t as f64))
    }

    /// Mean live objects per measured frame.
    pub fn mean_objects(&self) -> f64 {
        mean(self.objects.iter().map(|&n| n as f64))
    }

    /// Mean pairs per frame over the measured frames.
    pub fn mean_pairs(&self) -> f64 {
        let skip = self.pairs.len() - self.seconds.len().min(self.pairs.len());
        mean(self.pairs[skip..].iter().map(|&n| n as f64))
    }

    /// Median milliseconds per frame spent in the queries (0 without).
    pub fn median_query_ms(&self) -> f64 {
        median(&self.query_seconds) * 1e3
    }

    /// The first frame where this run and `reference` found different
    /// pairs or query results, among the frames both ran.
    pub fn first_difference(&self, reference: &Run) -> Option<Difference> {
        let frames = self.pairs.len().min(reference.pairs.len());
        let queries = |r: &Run, i: usize| r.query_fingerprints.get(i).copied().unwrap_or(0);
        (0..frames).find_map(|i| {
            let pairs_differ = self.pairs[i] != reference.pairs[i]
                || self.fingerprints[i] != reference.fingerprints[i];
            let queries_differ = queries(self, i) != queries(reference, i);
            (pairs_differ || queries_differ).then_some(Difference {
                frame: i,
                pairs: (self.pairs[i], reference.pairs[i]),
                in_queries: !pairs_differ,
            })
        })
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}
