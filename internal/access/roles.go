package access

import (
	"strings"

	"quarry/internal/fault"
)

// Role is a member's place in a project. There are three, ordered by how
// much they may do, so a project never needs a permission matrix of its own.
type Role string

// The roles a project member can hold.
const (
	Owner    Role = "owner"    // runs the project: everything a reviewer does, plus members and sharing
	Reviewer Role = "reviewer" // does the review: screens papers, decides checkpoints, starts runs
	Viewer   Role = "viewer"   // reads: runs, reports and marks, changing nothing
)

// Roles lists the roles from most to least able, the order a role picker
// shows them in.
func Roles() []Role { return []Role{Owner, Reviewer, Viewer} }

// ParseRole reads a role from a form or an API payload, forgiving case and
// surrounding space; anything else is an invalid "role" field.
func ParseRole(s string) (Role, error) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	switch r {
	case Owner, Reviewer, Viewer:
		return r, nil
	}
	return "", &fault.Error{
		Code:    fault.EInvalid,
		Message: "unknown role",
		Fields:  map[string]string{"role": "role must be owner, reviewer or viewer"},
	}
}

// Permission is one kind of action a handler checks before acting. Handlers
// ask for a permission, not a role, so the mapping lives only in Can.
type Permission string

// The permissions a role may grant.
const (
	View   Permission = "view"   // read runs, reports and marks
	Decide Permission = "decide" // mark papers, decide checkpoints, vote at gates
	Start  Permission = "start"  // start and fork runs
	Manage Permission = "manage" // members, roles, share links, the audit log
)

// AtLeast reports whether r ranks at or above o (owner > reviewer >
// viewer): a gate asking for reviewers takes owners too. Unknown roles
// rank below every known one.
func (r Role) AtLeast(o Role) bool {
	rank := func(x Role) int {
		switch x {
		case Owner:
			return 3
		case Reviewer:
			return 2
		case Viewer:
			return 1
		}
		return 0
	}
	return rank(r) > 0 && rank(r) >= rank(o)
}

// Can reports whether the role grants p. An unknown role (a corrupt row, a
// zero value) grants nothing, so a mistake fails closed.
func (r Role) Can(p Permission) bool {
	switch r {
	case Owner:
		return p == View || p == Decide || p == Start || p == Manage
	case Reviewer:
		return p == View || p == Decide || p == Start
	case Viewer:
		return p == View
	}
	return false
}
