//! The steady state of a drive under uniform random writes: the fraction of full blocks holding
//! each number of valid pages, from the mean-field model of B. Van Houdt, "A mean field model
//! for a class of garbage collection algorithms in flash-based solid state drives"
//! (SIGMETRICS 2013), for the d-choices victim rule (the victim is the block with the fewest
//! valid pages among `d` drawn at random). MQSim's preconditioning draws its block state from the
//! same model (`FTL::Perform_precondition`, `Utils::Euler_estimation`): `d = 1` is random
//! selection, and greedy is approximated by `d = 30` as MQSim does (its comment, citing the
//! paper: a larger d gives results close to greedy).
//!
//! The model, for `b` data pages per block and a fraction `ρ` of them valid on average: let
//! `w_i` be the fraction of blocks with at least `i` valid pages (`w_0 = 1`, `w_{b+1} = 0`).
//! A clean picks a victim with at least `i` valid pages with probability `w_i^d` and leaves a
//! full block (its own pages plus new writes), so `w_i` gains `1 − w_i^d` per clean; the clean
//! makes room for `b − Σ_j w_j^d` new writes, each invalidating a uniformly drawn valid page,
//! which is in a block with exactly `i` valid pages with probability `i (w_i − w_{i+1}) / (b ρ)`.
//! The fixed point of
//! `dw_i/dt = 1 − w_i^d − (b − Σ_j w_j^d) · i (w_i − w_{i+1}) / (b ρ)`, `1 ≤ i ≤ b`,
//! is found by Euler steps from the binomial distribution (every page valid with probability
//! `ρ`), as MQSim does, until no `w_i` moves by more than 1e-10. MQSim leaves `w_b` at its
//! binomial start (its loop stops at `b − 1`), which loses mass: at `b = 256`, `ρ = 0.734`
//! its mean valid fraction is 0.728; this solves every `i` and keeps the mean at `ρ`.

/// Euler steps allowed before the fixed point is declared reached (a bound: the tolerance is
/// met in about 10⁴ steps at the operating points of the tests below).
const MAX_STEPS: u32 = 1_000_000;

/// The largest change of any `w_i` in a step at which the iteration stops (MQSim's value).
const TOLERANCE: f64 = 1e-10;

/// The steady-state fraction of full blocks with `0..=b` valid pages under uniform random
/// writes, for the d-choices rule and mean valid fraction `rho` (`0 < rho < 1`).
pub fn valid_distribution(b: u32, rho: f64, d: i32) -> Vec<f64> {
    let b = b as usize;
    let mut w = vec![0.0; b + 2];
    // At least i valid of b, each valid with probability rho: accumulate the binomial pmf
    // from the top.
    let mut pmf = binomial_pmf(b, rho);
    for i in (0..=b).rev() {
        w[i] = w[i + 1] + pmf[i];
    }
    w[0] = 1.0;
    // A step small enough for the stiffest term (i = b): h · b / ρ ≤ 1/2.
    let h = (0.5 * rho / b as f64).min(1e-3);
    let mut next = w.clone();
    for _ in 0..MAX_STEPS {
        let chosen: f64 = w[1..=b].iter().map(|x| x.powi(d)).sum();
        let writes = b as f64 - chosen;
        let mut moved: f64 = 0.0;
        for i in 1..=b {
            let drift =
                1.0 - w[i].powi(d) - writes * (i as f64 * (w[i] - w[i + 1])) / (b as f64 * rho);
            next[i] = w[i] + h * drift;
            moved = moved.max((next[i] - w[i]).abs());
        }
        std::mem::swap(&mut w, &mut next);
        if moved <= TOLERANCE {
            break;
        }
    }
    for i in 0..=b {
        pmf[i] = (w[i] - w[i + 1]).max(0.0);
    }
    let total: f64 = pmf.iter().sum();
    pmf.iter().map(|p| p / total).collect()
}

/// Binomial(`b`, `p`) probabilities of `0..=b`, by the recurrence on successive terms in log
/// space (no factorials).
fn binomial_pmf(b: usize, p: f64) -> Vec<f64> {
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut log_c = 0.0;
    (0..=b)
        .map(|i| {
            if i > 0 {
                log_c += ((b - i + 1) as f64).ln() - (i as f64).ln();
            }
            (log_c + i as f64 * lp + (b - i) as f64 * lq).exp()
        })
        .collect()
}

/// `count` valid-page numbers whose empirical law is `pmf` (indices are valid pages): block
/// `k` takes the `(k + ½) / count` quantile, so the counts follow the law without sampling
/// noise. Sorted ascending.
pub fn quantiles(pmf: &[f64], count: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(count);
    let (mut i, mut cdf) = (0, pmf[0]);
    for k in 0..count {
        let q = (k as f64 + 0.5) / count as f64;
        while cdf < q && i + 1 < pmf.len() {
            i += 1;
            cdf += pmf[i];
        }
        out.push(i as u32);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(pmf: &[f64]) -> f64 {
        pmf.iter()
            .enumerate()
            .map(|(i, p)| i as f64 * p)
            .sum::<f64>()
            / (pmf.len() - 1) as f64
    }

    /// Van Houdt's closed form for random victim selection (d = 1): the fraction of blocks
    /// with at most `i` valid pages is `∏_{j=i+1..b} (1−ρ) j / (ρ + (1−ρ) j)`, as MQSim codes it
    /// for `RANDOM` (MQSim's extra factor `ρ / (ρ + (1−ρ)^i)` is 1 − O((1−ρ)^i) and left out).
    fn random_closed_form(b: usize, rho: f64) -> Vec<f64> {
        let at_most = |i: usize| -> f64 {
            ((i + 1)..=b)
                .map(|j| (1.0 - rho) * j as f64 / (rho + (1.0 - rho) * j as f64))
                .product()
        };
        (0..=b)
            .map(|i| at_most(i) - if i == 0 { 0.0 } else { at_most(i - 1) })
            .collect()
    }

    #[test]
    fn d1_reaches_the_closed_form_of_random_selection() {
        let (b, rho) = (32, 0.7);
        let model = valid_distribution(b as u32, rho, 1);
        let exact = random_closed_form(b, rho);
        for i in 1..=b {
            assert!(
                (model[i] - exact[i]).abs() < 1e-4,
                "{i}: {} vs {}",
                model[i],
                exact[i]
            );
        }
    }

    #[test]
    fn the_mean_valid_fraction_is_rho_and_greedy_leaves_no_nearly_empty_block() {
        let rho = 0.75 * 0.93 / (1.0 - 102.0 / 2048.0);
        let pmf = valid_distribution(256, rho, 30);
        assert!((pmf.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((mean(&pmf) - rho).abs() < 1e-6, "{}", mean(&pmf));
        // Greedy cleans the emptiest blocks first: none holds under 40 % valid pages, while
        // random selection (d = 1) leaves many.
        let below = |p: &[f64]| p[..102].iter().sum::<f64>();
        assert!(below(&pmf) < 1e-3, "{}", below(&pmf));
        assert!(below(&valid_distribution(256, rho, 1)) > 0.05);
    }

    #[test]
    fn quantiles_follow_the_law_and_sum_to_its_mean() {
        let pmf = [0.25, 0.0, 0.5, 0.25];
        assert_eq!(quantiles(&pmf, 4), vec![0, 2, 2, 3]);
        let law = valid_distribution(64, 0.6, 30);
        let q = quantiles(&law, 10_000);
        let total: u64 = q.iter().map(|&x| u64::from(x)).sum();
        let expect = 0.6 * 64.0 * 10_000.0;
        assert!((total as f64 - expect).abs() / expect < 1e-3, "{total}");
    }
}
