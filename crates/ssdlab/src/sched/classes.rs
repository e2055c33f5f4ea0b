//! A die's queue of user reads or of user writes, in priority classes when asked
//! (`sched.flow_priority`): MQSim's `TSU_Priority_OutOfOrder` keeps one queue per NVMe
//! priority class per chip and direction, serves the urgent one first, and takes the others
//! by weighted round robin (`get_next_read_service_queue`, `get_next_write_service_queue`):
//! the class after the last visited, urgent skipped, each visit of the high class lowering a
//! current weight that starts at the high class's weight and wraps to it; a class may serve
//! when its weight reaches the current weight and it holds something. With weights 4, 2, 1
//! (MQSim's `get_scheduling_weight`) a backlogged die serves high, high, medium, high,
//! medium, low, high, … — 4 : 2 : 1.
//!
//! Operations moved ahead (translation reads, `sched.mapping_reads_first`) wait in a lane of
//! their own served before every class, as MQSim serves its mapping-read queue first. Without
//! classes the queue is one first-in first-out lane, as before.

use std::collections::VecDeque;

/// One queued operation: (enqueue sequence number or age key, op index).
pub type Entry = (u64, u32);

/// Number of NVMe priority classes: urgent, high, medium, low.
pub const CLASSES: usize = 4;

/// A die's queue of one direction of user operations: one first-in first-out lane, or the
/// priority classes' lanes.
#[derive(Debug, Default)]
pub struct ClassQueue {
    /// Without classes: every operation, those moved ahead first.
    one: VecDeque<Entry>,
    /// With classes (boxed: the plain queue stays as small and as fast as before).
    classes: Option<Box<Classes>>,
}

/// The lanes of a queue in priority classes and its round-robin state.
#[derive(Debug)]
struct Classes {
    /// Operations moved ahead of all others, in the order they were moved.
    ahead: VecDeque<Entry>,
    /// One lane per priority class, urgent first.
    lanes: [VecDeque<Entry>; CLASSES],
    /// Weights of the high, medium and low classes.
    weights: [u32; 3],
    /// The class visited last.
    next: usize,
    /// The current weight a class must reach to serve.
    weight: u32,
    /// The lane the latest operation joined.
    last: usize,
}

/// Where the next operation comes from, and the round-robin state taking it leaves.
#[derive(Debug, Clone, Copy)]
enum Choice {
    Ahead,
    Lane {
        lane: usize,
        next: usize,
        weight: u32,
    },
}

impl Classes {
    /// What the next pop takes, without taking it.
    fn choice(&self) -> Option<Choice> {
        if !self.ahead.is_empty() {
            return Some(Choice::Ahead);
        }
        if !self.lanes[0].is_empty() {
            return Some(Choice::Lane {
                lane: 0,
                next: self.next,
                weight: self.weight,
            });
        }
        let class_weight = |c: usize| self.weights[c - 1];
        let (mut next, mut weight) = (self.next, self.weight);
        // MQSim stops after as many visits of the high class as its weight and may then find
        // nothing while a lower class waits (every other call when only the low class holds
        // work); two cycles of the current weight always reach every class, so a die here
        // never idles with work queued.
        let mut tries = 0;
        while tries <= 2 * self.weights[0] {
            next = (next + 1) % CLASSES;
            if next == 0 {
                next = 1;
            }
            if next == 1 {
                tries += 1;
                weight = weight.saturating_sub(1);
                if weight == 0 {
                    weight = self.weights[0];
                }
            }
            if class_weight(next) >= weight && !self.lanes[next].is_empty() {
                return Some(Choice::Lane {
                    lane: next,
                    next,
                    weight,
                });
            }
        }
        None
    }

    fn front(&self) -> Option<&Entry> {
        match self.choice()? {
            Choice::Ahead => self.ahead.front(),
            Choice::Lane { lane, .. } => self.lanes[lane].front(),
        }
    }

    fn pop_front(&mut self) -> Option<Entry> {
        match self.choice()? {
            Choice::Ahead => self.ahead.pop_front(),
            Choice::Lane { lane, next, weight } => {
                self.next = next;
                self.weight = weight;
                self.lanes[lane].pop_front()
            }
        }
    }

    fn oldest(&self) -> Option<u64> {
        self.ahead
            .front()
            .into_iter()
            .chain(self.lanes.iter().filter_map(VecDeque::front))
            .map(|e| e.0)
            .min()
    }

    fn len(&self) -> usize {
        self.ahead.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }
}

impl ClassQueue {
    /// A queue in the four priority classes, the high, medium and low ones weighted so.
    pub fn with_classes(weights: [u32; 3]) -> Self {
        ClassQueue {
            one: VecDeque::new(),
            classes: Some(Box::new(Classes {
                ahead: VecDeque::new(),
                lanes: Default::default(),
                weights,
                next: 0,
                weight: weights[0],
                last: 0,
            })),
        }
    }

    /// Queues an operation of priority `class` (0 urgent … 3 low; ignored without classes).
    #[inline]
    pub fn push_back(&mut self, entry: Entry, class: usize) {
        match self.classes.as_deref_mut() {
            None => self.one.push_back(entry),
            Some(c) => {
                let lane = class.min(CLASSES - 1);
                c.lanes[lane].push_back(entry);
                c.last = lane;
            }
        }
    }

    /// Moves the operation queued last ahead of every other but those moved before it
    /// (which carry the same age key `key`), giving it `key`.
    pub fn move_last_ahead(&mut self, key: u64) {
        match self.classes.as_deref_mut() {
            None => {
                let (_, id) = self.one.pop_back().expect("an operation was just queued");
                let at = self.one.iter().take_while(|e| e.0 == key).count();
                self.one.insert(at, (key, id));
            }
            Some(c) => {
                let (_, id) = c.lanes[c.last]
                    .pop_back()
                    .expect("an operation was just queued");
                c.ahead.push_back((key, id));
            }
        }
    }

    /// The operation the die would take next from this queue.
    #[inline]
    pub fn front(&self) -> Option<&Entry> {
        match self.classes.as_deref() {
            None => self.one.front(),
            Some(c) => c.front(),
        }
    }

    /// Takes the operation [`front`](Self::front) shows.
    #[inline]
    pub fn pop_front(&mut self) -> Option<Entry> {
        match self.classes.as_deref_mut() {
            None => self.one.pop_front(),
            Some(c) => c.pop_front(),
        }
    }

    /// The age key of the oldest operation queued, whichever class it is in: what a policy
    /// comparing ages across a die's queues sees, so an operation queued after a read (an
    /// erase of the read's block) never goes before it, whatever the classes' order. One
    /// lane: its head's.
    #[inline]
    pub fn oldest(&self) -> Option<u64> {
        match self.classes.as_deref() {
            None => self.one.front().map(|e| e.0),
            Some(c) => c.oldest(),
        }
    }

    /// Every queued operation: those moved ahead, then each lane in class order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        // One of the two is empty.
        let classes = self.classes.as_deref().into_iter();
        self.one
            .iter()
            .chain(classes.flat_map(|c| c.ahead.iter().chain(c.lanes.iter().flatten())))
    }

    /// Removes the operation at position `i` of [`iter`](Self::iter).
    pub fn remove(&mut self, mut i: usize) -> Option<Entry> {
        let Some(c) = self.classes.as_deref_mut() else {
            return self.one.remove(i);
        };
        if i < c.ahead.len() {
            return c.ahead.remove(i);
        }
        i -= c.ahead.len();
        for lane in &mut c.lanes {
            if i < lane.len() {
                return lane.remove(i);
            }
            i -= lane.len();
        }
        None
    }

    /// Operations queued.
    #[inline]
    pub fn len(&self) -> usize {
        match self.classes.as_deref() {
            None => self.one.len(),
            Some(c) => c.len(),
        }
    }

    /// Whether nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        match self.classes.as_deref() {
            None => self.one.is_empty(),
            Some(c) => c.len() == 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes of the first `n` operations taken from `q`.
    fn served(q: &mut ClassQueue, n: usize) -> Vec<usize> {
        (0..n)
            .map(|_| (q.pop_front().expect("backlogged").1 / 1000) as usize)
            .collect()
    }

    /// A queue of 100 operations of each of `classes`.
    fn backlogged(weights: [u32; 3], classes: &[usize]) -> ClassQueue {
        let mut q = ClassQueue::with_classes(weights);
        for &c in classes {
            for i in 0..100 {
                q.push_back((i, (c * 1000) as u32 + i as u32), c);
            }
        }
        q
    }

    #[test]
    fn backlogged_classes_are_served_four_two_one_as_mqsim() {
        let mut q = backlogged([4, 2, 1], &[1, 2, 3]);
        assert_eq!(
            served(&mut q, 14),
            [1, 1, 2, 1, 2, 3, 1, 1, 1, 2, 1, 2, 3, 1]
        );
        // Urgent first, whatever the weights; a class with nothing queued is passed over.
        let mut q = backlogged([4, 2, 1], &[3, 0]);
        assert_eq!(served(&mut q, 3), [0, 0, 0]);
        let mut q = backlogged([4, 2, 1], &[3]);
        assert_eq!(served(&mut q, 10), [3; 10]);
    }

    #[test]
    fn front_shows_what_pop_front_takes_and_ahead_goes_first() {
        let mut q = backlogged([4, 2, 1], &[2, 3]);
        for _ in 0..20 {
            let head = *q.front().unwrap();
            assert_eq!(q.pop_front(), Some(head));
        }
        q.push_back((7, 4242), 3);
        q.move_last_ahead(0);
        assert_eq!(q.front(), Some(&(0, 4242)));
        assert_eq!(q.iter().next(), Some(&(0, 4242)));
        assert_eq!(q.remove(0), Some((0, 4242)));
        assert_eq!(q.len(), 180);
    }

    #[test]
    fn one_lane_is_first_in_first_out() {
        let mut q = ClassQueue::default();
        for (i, c) in [(1, 3), (2, 0), (3, 2)] {
            q.push_back((i, i as u32), c);
        }
        assert_eq!(q.iter().map(|e| e.0).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(q.remove(1), Some((2, 2)));
        assert_eq!(q.pop_front(), Some((1, 1)));
        assert_eq!(q.pop_front(), Some((3, 3)));
        assert!(q.is_empty() && q.pop_front().is_none());
    }
}
