package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
)

func TestApprovalTally(t *testing.T) {
	t.Parallel()
	votes := func(opts ...string) []engine.Vote {
		out := make([]engine.Vote, len(opts))
		for i, o := range opts {
			out[i] = engine.Vote{Voter: string(rune('a' + i)), Option: o}
		}
		return out
	}
	twoOfThree := engine.Approval{Count: 2, Of: 3, Pass: []string{"Yes"}, Fail: []string{"No", "Later"}}
	twoOfAny := engine.Approval{Count: 2, Pass: []string{"Yes"}, Fail: []string{"No", "Later"}}
	tests := []struct {
		name    string
		rule    engine.Approval
		votes   []engine.Vote
		option  string
		decided bool
		needed  int
	}{
		{"NoVotes", twoOfThree, nil, "", false, 2},
		{"OnePass", twoOfThree, votes("Yes"), "", false, 1},
		{"Passes", twoOfThree, votes("Yes", "No", "Yes"), "Yes", true, 0},
		{"FailingOptionReachesCount", twoOfAny, votes("No", "Yes", "No"), "No", true, 1},
		{"CanStillPass", twoOfThree, votes("Yes", "No"), "", false, 1},
		{"CannotPass", twoOfThree, votes("No", "Later"), "No", true, 2},
		{"CannotPassEarly", engine.Approval{Count: 3, Of: 4, Pass: []string{"Yes"}, Fail: []string{"No", "Later"}}, votes("Later", "Later", "Yes"), "Later", true, 2},
		{"StillReachable", engine.Approval{Count: 3, Of: 4, Pass: []string{"Yes"}, Fail: []string{"No", "Later"}}, votes("Later", "Yes"), "", false, 2},
		{"CannotPassMostVotesFails", engine.Approval{Count: 3, Of: 4, Pass: []string{"Yes"}, Fail: []string{"No", "Later"}}, votes("Later", "No", "Yes", "Later"), "Later", true, 2},
		{"UnknownVotersNeverFailEarly", twoOfAny, votes("No", "Later"), "", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			option, ok := tt.rule.Tally(tt.votes)
			require.Equal(t, tt.decided, ok)
			require.Equal(t, tt.option, option)
			require.Equal(t, tt.needed, tt.rule.Needed(tt.votes))
		})
	}
}
