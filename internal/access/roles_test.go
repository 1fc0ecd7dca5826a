package access_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/access"
	"quarry/internal/fault"
)

func TestParseRole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want access.Role
		code string
	}{
		{"owner", access.Owner, ""},
		{"  Reviewer ", access.Reviewer, ""},
		{"VIEWER", access.Viewer, ""},
		{"", "", fault.EInvalid},
		{"admin", "", fault.EInvalid},
		{"own er", "", fault.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := access.ParseRole(tt.in)
			require.Equal(t, tt.code, fault.ErrorCode(err))
			require.Equal(t, tt.want, got)
			if err != nil {
				require.Contains(t, fault.ErrorFields(err), "role")
			}
		})
	}
}

func TestRolesRoundTrip(t *testing.T) {
	t.Parallel()
	require.Equal(t, []access.Role{access.Owner, access.Reviewer, access.Viewer}, access.Roles())
	for _, r := range access.Roles() {
		got, err := access.ParseRole(string(r))
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
}

func TestCan(t *testing.T) {
	t.Parallel()
	all := []access.Permission{access.View, access.Decide, access.Start, access.Manage}
	tests := []struct {
		role access.Role
		can  []access.Permission
	}{
		{access.Owner, all},
		{access.Reviewer, []access.Permission{access.View, access.Decide, access.Start}},
		{access.Viewer, []access.Permission{access.View}},
		{"", nil},
		{"admin", nil},
		{"Owner", nil}, // not parsed: fails closed
	}
	for _, tt := range tests {
		t.Run(string(tt.role), func(t *testing.T) {
			t.Parallel()
			for _, p := range all {
				require.Equal(t, contains(tt.can, p), tt.role.Can(p), "%q can %q", tt.role, p)
			}
			require.False(t, tt.role.Can("delete"), "an unknown permission is never granted")
		})
	}
}

func contains(ps []access.Permission, p access.Permission) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}
