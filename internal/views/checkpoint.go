package views

// The run's loop bound as the strategy and review forms tell it: which
// iteration this is, and whether it is the last.

import (
	"fmt"
	"strconv"
)

// strategyBounded gives a strategy form the run's loop bound when it has
// none: the decision handlers rebuild the form from its checkpoint, which
// does not carry the bound, and the page's must still reach the form.
func strategyBounded(f StrategyForm, maxIterations int) StrategyForm {
	if f.MaxIterations == 0 {
		f.MaxIterations = maxIterations
	}
	return f
}

// reviewBounded is strategyBounded for the review form.
func reviewBounded(f ReviewForm, maxIterations int) ReviewForm {
	if f.MaxIterations == 0 {
		f.MaxIterations = maxIterations
	}
	return f
}

// lastIteration reports whether a checkpoint is at the run's loop bound,
// where the engine turns "iterate" into the loop's exit: the run ends.
// An unknown bound (0) is never the last.
func lastIteration(iteration, maxIterations int) bool {
	return maxIterations > 0 && iteration >= maxIterations
}

// iterationText is "iteration 2 of 3", or "iteration 2" when the bound is
// not known, so the researcher always sees how many are left.
func iterationText(iteration, maxIterations int) string {
	if maxIterations <= 0 {
		return "iteration " + strconv.Itoa(iteration)
	}
	return fmt.Sprintf("iteration %d of %d", iteration, maxIterations)
}

// lastIterationLead opens the last-iteration notice of both checkpoints.
func lastIterationLead(iteration, maxIterations int) string {
	return fmt.Sprintf("This is %s, the last this run may take.", iterationText(iteration, maxIterations))
}
