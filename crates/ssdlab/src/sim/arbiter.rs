//! With several I/O flows, each flow's requests wait in its own submission queue until the
//! drive takes them; the arbiter picks which flow's next request it takes
//! (`host.arbitration`): the earliest arrival (`fifo`), NVMe's round robin, or NVMe's weighted
//! round robin with an urgent class (NVMe base specification, "Arbitration Mechanisms").

use crate::config::Arbitration;
use crate::workload::flows::FlowSpec;

/// Which flow goes next, and the turn state that makes it so.
#[derive(Debug, Clone)]
pub(super) struct Arbiter {
    kind: Arbitration,
    /// Requests per round of the high, medium and low classes.
    weights: [u32; 3],
    /// Each flow's class: 0 urgent, 1 high, 2 medium, 3 low.
    class: Vec<usize>,
    /// Round robin: the flow after the one served last, per class (all flows: class 0's slot
    /// under plain round robin).
    next: [usize; 4],
    /// What the weighted classes may still take this round.
    credits: [u32; 3],
}

impl Arbiter {
    pub(super) fn new(kind: Arbitration, weights: [u32; 3], flows: &[FlowSpec]) -> Self {
        Arbiter {
            kind,
            weights,
            class: flows.iter().map(|f| f.priority.index()).collect(),
            next: [0; 4],
            credits: weights,
        }
    }

    /// The flow whose waiting request goes next: among the flows `ready` accepts, given the
    /// arrival time of each flow's oldest waiting request (`head`).
    pub(super) fn pick(
        &mut self,
        ready: impl Fn(usize) -> bool,
        head: impl Fn(usize) -> u64,
    ) -> Option<usize> {
        let class = &self.class;
        let n = class.len();
        match self.kind {
            Arbitration::Fifo => (0..n).filter(|&k| ready(k)).min_by_key(|&k| (head(k), k)),
            Arbitration::RoundRobin => turn(&mut self.next[0], n, ready),
            Arbitration::WeightedRoundRobin => {
                if let Some(k) = turn(&mut self.next[0], n, |k| class[k] == 0 && ready(k)) {
                    return Some(k);
                }
                // A round ends when no class with credit left has a flow ready; then every
                // class's credit is renewed.
                for _ in 0..2 {
                    for c in 1..=3 {
                        if self.credits[c - 1] == 0 {
                            continue;
                        }
                        if let Some(k) = turn(&mut self.next[c], n, |k| class[k] == c && ready(k)) {
                            self.credits[c - 1] -= 1;
                            return Some(k);
                        }
                    }
                    self.credits = self.weights;
                }
                None
            }
        }
    }
}

/// The next of `n` flows `ok` accepts in turn order from `next`, which then points past it.
fn turn(next: &mut usize, n: usize, ok: impl Fn(usize) -> bool) -> Option<usize> {
    let k = (0..n).map(|i| (*next + i) % n).find(|&k| ok(k))?;
    *next = (k + 1) % n;
    Some(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::flows::Priority;

    fn flows(classes: &[Priority]) -> Vec<FlowSpec> {
        classes
            .iter()
            .enumerate()
            .map(|(i, &p)| FlowSpec {
                priority: p,
                ..FlowSpec::named(&format!("f{i}"))
            })
            .collect()
    }

    /// The first `n` picks with every flow always ready and arrivals `head`.
    fn picks(a: &mut Arbiter, n: usize, head: &[u64]) -> Vec<usize> {
        (0..n)
            .map(|_| a.pick(|_| true, |k| head[k]).unwrap())
            .collect()
    }

    #[test]
    fn fifo_takes_the_oldest_arrival_and_round_robin_takes_turns() {
        let f = flows(&[Priority::High; 3]);
        let mut fifo = Arbiter::new(Arbitration::Fifo, [4, 2, 1], &f);
        assert_eq!(picks(&mut fifo, 3, &[5, 3, 3]), [1, 1, 1]);
        let mut rr = Arbiter::new(Arbitration::RoundRobin, [4, 2, 1], &f);
        assert_eq!(picks(&mut rr, 7, &[0, 0, 0]), [0, 1, 2, 0, 1, 2, 0]);
        // A flow with nothing waiting is skipped, and its turn comes back after the others.
        let mut rr = Arbiter::new(Arbitration::RoundRobin, [4, 2, 1], &f);
        let got: Vec<_> = (0..4)
            .map(|_| rr.pick(|k| k != 1, |_| 0).unwrap())
            .collect();
        assert_eq!(got, [0, 2, 0, 2]);
    }

    #[test]
    fn weighted_round_robin_serves_urgent_first_then_classes_by_weight() {
        use Priority::*;
        let f = flows(&[Low, High, Medium, High]);
        let mut wrr = Arbiter::new(Arbitration::WeightedRoundRobin, [4, 2, 1], &f);
        // Per round: 4 from the high class (its two flows in turn), 2 medium, 1 low.
        assert_eq!(
            picks(&mut wrr, 14, &[0; 4]),
            [1, 3, 1, 3, 2, 2, 0, 1, 3, 1, 3, 2, 2, 0]
        );
        // An urgent flow goes before all, whatever the weights.
        let f = flows(&[Low, Urgent]);
        let mut wrr = Arbiter::new(Arbitration::WeightedRoundRobin, [4, 2, 1], &f);
        assert_eq!(picks(&mut wrr, 3, &[0, 0]), [1, 1, 1]);
        // A class with nothing ready does not hold up the others (work conserving).
        let f = flows(&[High, Low]);
        let mut wrr = Arbiter::new(Arbitration::WeightedRoundRobin, [4, 2, 1], &f);
        let got: Vec<_> = (0..3)
            .map(|_| wrr.pick(|k| k == 1, |_| 0).unwrap())
            .collect();
        assert_eq!(got, [1, 1, 1]);
        assert_eq!(wrr.pick(|_| false, |_| 0), None);
    }
}
