//! Static wear levelling (`ftl.static_wl_threshold`): a drive filled with cold data whose few
//! hot pages are rewritten over and over wears its blocks evenly only when the cold blocks are
//! collected once the erase counts drift apart.

use crate::{config, page_request};
use ssdlab::metrics::Summary;
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::IoOp;

fn hammer(threshold: u32) -> Summary {
    let cfg = config(
        "tiny",
        &[
            "precondition.fill=0.9",
            &format!("ftl.static_wl_threshold={threshold}"),
        ],
    );
    // 40,000 writes of 64 hot pages, 1 ms apart (the die keeps up).
    let mut it = (0..40_000u64).map(|i| page_request(i * 1000, i % 64, IoOp::Write, None));
    let opts = RunOptions {
        seed: 1,
        verify: true,
        ..Default::default()
    };
    Simulation::new(&cfg, opts, &mut it).unwrap().run().unwrap()
}

#[test]
fn static_wear_levelling_keeps_erase_counts_within_its_threshold() {
    let off = hammer(0);
    let on = hammer(4);
    let spread = |s: &Summary| s.wear.erase_max - s.wear.erase_min;
    // Without it the cold blocks are never erased while the hot ones are, over and over.
    assert_eq!(off.wear.erase_min, 0);
    assert!(spread(&off) > 20, "{}", spread(&off));
    assert_eq!(off.wear.static_wl_runs, 0);
    // With it the spread stays near the threshold, at the cost of moving cold data.
    assert!(on.wear.static_wl_runs > 0);
    assert!(
        spread(&on) <= 6,
        "{} {:?} {:?}",
        spread(&on),
        on.wear,
        off.wear
    );
    assert!(on.gc.pages_moved > off.gc.pages_moved);
}
