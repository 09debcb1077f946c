//! The layered schedule: the gates grouped into steps an evaluator runs in order.

use super::{AndGate, Circuit, Gate};

/// One step of a [`Circuit::schedule`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Gates each party evaluates alone (XOR, NOT, copies, constants), in an order where every
    /// gate's inputs are ready.
    Local(Vec<Gate>),
    /// All ANDs of one AND depth: independent of each other, so one batched round opens them.
    Ands(Vec<AndGate>),
}

impl Circuit {
    /// The gates grouped into steps: the local gates of AND depth 0, the ANDs of depth 1, the
    /// local gates of depth 1, and so on (a local gate's depth is its output's). Empty steps are
    /// left out, so there is exactly one [`Step::Ands`] per AND depth. Within a step the
    /// circuit's order is kept, which keeps a local gate after the local gates it reads.
    ///
    /// ```
    /// use ringfence_core::circuit::{Builder, Step};
    /// let (mut b, ins) = Builder::new(&[4]);
    /// let x = b.and(&ins[0][..2]);
    /// let y = b.and(&[x, ins[0][2], ins[0][3]]);
    /// let c = b.finish(&[vec![y]])?;
    /// let steps = c.schedule();
    /// assert!(matches!(&steps[..], [Step::Ands(l1), Step::Ands(l2)] if l1.len() == 1 && l2.len() == 1));
    /// # Ok::<(), ringfence_core::Error>(())
    /// ```
    pub fn schedule(&self) -> Vec<Step> {
        let depth = self.depths();
        let layers = depth.iter().copied().max().unwrap_or(0);
        let mut locals = vec![Vec::new(); layers + 1];
        let mut ands = vec![Vec::new(); layers + 1];
        for g in &self.gates {
            let d = depth[g.out()];
            match g {
                Gate::And(a) => ands[d].push(a.clone()),
                other => locals[d].push(other.clone()),
            }
        }
        let mut steps = Vec::with_capacity(2 * layers + 1);
        for (d, (l, a)) in locals.into_iter().zip(ands).enumerate() {
            // `ands[0]` is always empty: an AND's depth is at least 1.
            if d > 0 && !a.is_empty() {
                steps.push(Step::Ands(a));
            }
            if !l.is_empty() {
                steps.push(Step::Local(l));
            }
        }
        steps
    }
}
