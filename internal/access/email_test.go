package access_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/access"
	"quarry/internal/fault"
)

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".org"
	require.Len(t, long, 254)
	tests := []struct {
		name, in, want string
	}{
		{"Plain", "ann@example.org", "ann@example.org"},
		{"Upper", "A@B.ORG", "a@b.org"},
		{"Trimmed", "  ann@example.org\n", "ann@example.org"},
		{"PlusTag", "ann+quarry@example.org", "ann+quarry@example.org"},
		{"Subdomain", "ann.lee@mail.uni.example.ac.uk", "ann.lee@mail.uni.example.ac.uk"},
		{"MaxLength", long, long},
		{"DisplayName", "Ann <a@b.org>", ""},
		{"AngleBrackets", "<a@b.org>", ""},
		{"QuotedName", `"Ann" <a@b.org>`, ""},
		{"Comment", "a@b.org (Ann)", ""},
		{"QuotedLocal", `"a b"@c.org`, ""},
		{"Two", "a@b.org, c@d.org", ""},
		{"NoAt", "ann.example.org", ""},
		{"NoDomain", "ann@", ""},
		{"NoLocal", "@example.org", ""},
		{"Space", "ann lee@example.org", ""},
		{"Empty", "", ""},
		{"Blank", "   ", ""},
		{"TooLong", "a" + long, ""},
		{"Newline", "a@b.org\nBcc: c@d.org", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := access.NormalizeEmail(tt.in)
			if tt.want != "" {
				require.NoError(t, err)
				require.Equal(t, tt.want, got)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%q", got)
			require.NotEmpty(t, fault.ErrorFields(err)["email"])
			require.Empty(t, got)
		})
	}
}

func TestCheckDisplayName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"Plain", "Ann Lee", "Ann Lee"},
		{"Trimmed", "  Ann Lee \t", "Ann Lee"},
		{"GuestSuffix", "Ann Lee (Guest)", ""},
		{"OneRune", "A", "A"},
		{"Unicode", "Zoë Ó Súilleabháin", "Zoë Ó Súilleabháin"},
		{"CJK", "李安", "李安"},
		{"EmojiZWJ", "Ann 👩‍🔬", "Ann 👩‍🔬"},
		{"EightyRunes", strings.Repeat("é", 80), strings.Repeat("é", 80)},
		{"EightyOne", strings.Repeat("é", 81), ""},
		{"Empty", "", ""},
		{"Blank", " \t\n", ""},
		{"Newline", "Ann\nLee", ""},
		{"Tab", "Ann\tLee", ""},
		{"NUL", "Ann\x00", ""},
		{"DEL", "Ann\x7f", ""},
		{"C1", "Ann\u0085Lee", ""},
		{"BidiOverride", "Ann\u202eeeL", ""},
		{"BidiIsolate", "Ann\u2066Lee", ""},
		{"InvalidUTF8", "Ann\xff", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := access.CheckDisplayName(tt.in)
			if tt.want != "" {
				require.NoError(t, err)
				require.Equal(t, tt.want, got)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			require.NotEmpty(t, fault.ErrorFields(err)["name"])
		})
	}
}
