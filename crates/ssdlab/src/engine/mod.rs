//! The event queue: events ordered by `(time, sequence number)`.
//!
//! The sequence number is taken when an event is pushed, so events scheduled for the same
//! nanosecond run first-in, first-out. This is the tie-ordering contract every component relies
//! on for determinism.
//!
//! The queue is a binary min-heap written out here rather than `std`'s `BinaryHeap`: that one
//! parks the element being sifted in a stack slot field by field and reloads it whole, a
//! store-forwarding stall on every pop that cost ~15 % of the replay (`perf annotate` on a
//! cache-resident run). Keeping the element in registers removes it; `push` is inlined into its
//! callers for the same reason (an event passed through memory is stored field by field and
//! reloaded whole). `pop` is Floyd's, with the child chosen without a branch (see there). As
//! `(time, sequence)` is a total order, any correct heap pops the same sequence.

use crate::time::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// Whether this entry runs before `other`.
    #[inline]
    fn before(&self, other: &Self) -> bool {
        // One 128-bit comparison: no branch between the two halves, so callers can select
        // with a conditional move.
        let key = |e: &Self| u128::from(e.time.0) << 64 | u128::from(e.seq);
        key(self) < key(other)
    }
}

/// A priority queue of timed events with FIFO order among equal times.
pub struct EventQueue<E> {
    /// A binary min-heap on `(time, seq)`: every entry runs no later than its children.
    heap: Vec<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: Vec::new(),
            next_seq: 0,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    /// Schedules `event` at `time`. Always inlined: see the module's note on stalls.
    #[inline(always)]
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.reserve();
        self.push_reserved(time, seq, event);
    }

    /// Takes the next sequence number without scheduling anything: an event that would have
    /// been pushed now but is left out while nothing depends on it. If something comes to
    /// depend on it, [`EventQueue::push_reserved`] schedules it in the place it would have had.
    #[inline(always)]
    pub fn reserve(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// Schedules `event` at `time` with `seq` taken earlier by [`EventQueue::reserve`]: it
    /// runs where an event pushed when `seq` was reserved would run.
    #[inline(always)]
    pub fn push_reserved(&mut self, time: SimTime, seq: u64, event: E) {
        debug_assert!(seq < self.next_seq, "push_reserved takes a reserved number");
        let entry = Entry { time, seq, event };
        let hole = self.heap.len();
        self.heap.push(entry);
        self.sift_up(hole, entry);
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_keyed().map(|(t, _, e)| (t, e))
    }

    /// Removes and returns the earliest event with its sequence number.
    pub fn pop_keyed(&mut self) -> Option<(SimTime, u64, E)> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            return Some((last.time, last.seq, last.event));
        };
        // Floyd's pop: move the hole from the root down to a leaf along the earlier child
        // (chosen without a branch), then sift `last` up from there. The entry that replaces
        // the root usually belongs near the bottom, so this takes fewer unpredictable branches
        // than stopping on the way down.
        let n = self.heap.len();
        let mut i = 0;
        while 2 * i + 2 < n {
            let left = 2 * i + 1;
            let child = left + usize::from(self.heap[left + 1].before(&self.heap[left]));
            self.heap[i] = self.heap[child];
            i = child;
        }
        if 2 * i + 1 < n {
            self.heap[i] = self.heap[2 * i + 1];
            i = 2 * i + 1;
        }
        self.sift_up(i, last);
        Some((top.time, top.seq, top.event))
    }

    /// Places `entry` in the hole at `i` or above it, moving later parents down.
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, entry: Entry<E>) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !entry.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }
}

impl<E> EventQueue<E> {
    /// Number of events waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when no event is waiting.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Sequence numbers taken: events pushed and numbers reserved.
    pub fn pushed(&self) -> u64 {
        self.next_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_push_order() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), 'a');
        q.push(SimTime(3), 'b');
        q.push(SimTime(5), 'c');
        q.push(SimTime(3), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.pushed(), 4);
    }

    #[test]
    fn a_reserved_push_runs_where_its_reservation_was_taken() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), 'a');
        let seq = q.reserve();
        q.push(SimTime(5), 'c');
        q.push_reserved(SimTime(5), seq, 'b');
        q.push(SimTime(4), 'z');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['z', 'a', 'b', 'c']);
        assert_eq!(q.pushed(), 4);
    }

    proptest::proptest! {
        /// Any interleaving of pushes and pops yields events in (time, push order) order,
        /// as a sorted reference does.
        #[test]
        fn pops_in_time_then_push_order(
            steps in proptest::collection::vec(proptest::option::of(0u64..20), 0..300)
        ) {
            let mut q = EventQueue::default();
            let mut reference = std::collections::BTreeSet::new();
            for (n, step) in steps.into_iter().enumerate() {
                match step {
                    Some(t) => {
                        q.push(SimTime(t), n);
                        reference.insert((t, n));
                    }
                    None => {
                        let want = reference.pop_first();
                        proptest::prop_assert_eq!(q.pop(), want.map(|(t, n)| (SimTime(t), n)));
                    }
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
            }
            while let Some((t, n)) = reference.pop_first() {
                proptest::prop_assert_eq!(q.pop(), Some((SimTime(t), n)));
            }
            proptest::prop_assert!(q.is_empty());
        }
    }
}
