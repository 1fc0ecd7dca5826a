package access_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/access"
	"quarry/internal/fault"
)

// cheapHasher keeps the tests fast; the format and the checks do not depend on cost.
func cheapHasher() access.Hasher { return access.Hasher{Time: 1, MemoryKiB: 64, Threads: 1} }

// Made by the reference implementation (libargon2, argon2id_hash_encoded)
// for "correct horse battery staple" and the salt "quarry-salt-0001".
const (
	refCheap   = "$argon2id$v=19$m=64,t=2,p=2$cXVhcnJ5LXNhbHQtMDAwMQ$sAU/bbZHVftqOilKjnWV6TymnsvMh/PCFid1ycgjwv8"
	refDefault = "$argon2id$v=19$m=19456,t=2,p=1$cXVhcnJ5LXNhbHQtMDAwMQ$NET8YAeyue3LV93f/LFh3HR4Hv+TCLx+Mfo5MH03GIE"
	refPass    = "correct horse battery staple"
)

func TestHashRoundTrip(t *testing.T) {
	t.Parallel()
	enc, err := cheapHasher().Hash("correct horse")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$"), enc)

	ok, err := access.VerifyPassword(enc, "correct horse")
	require.NoError(t, err)
	require.True(t, ok)

	ok, err = access.VerifyPassword(enc, "correct horsE")
	require.NoError(t, err)
	require.False(t, ok, "a wrong password is false, not an error")

	again, err := cheapHasher().Hash("correct horse")
	require.NoError(t, err)
	require.NotEqual(t, enc, again, "each hash has its own salt")
}

func TestDefaultHasher(t *testing.T) {
	t.Parallel()
	require.Equal(t, access.Hasher{Time: 2, MemoryKiB: 19456, Threads: 1}, access.DefaultHasher())
	enc, err := access.DefaultHasher().Hash("x")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(enc, "$argon2id$v=19$m=19456,t=2,p=1$"), enc)
	require.Len(t, strings.Split(enc, "$")[4], 22, "16-byte salt")
	require.Len(t, strings.Split(enc, "$")[5], 43, "32-byte key")
}

func TestVerifyReferenceHashes(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{refCheap, refDefault} {
		ok, err := access.VerifyPassword(enc, refPass)
		require.NoError(t, err)
		require.True(t, ok, "hash from the reference implementation: %s", enc)
		ok, err = access.VerifyPassword(enc, refPass+" ")
		require.NoError(t, err)
		require.False(t, ok)
	}
}

func TestVerifyOtherParameters(t *testing.T) {
	t.Parallel()
	other := access.Hasher{Time: 3, MemoryKiB: 128, Threads: 2}
	enc, err := other.Hash("old password")
	require.NoError(t, err)
	ok, err := access.VerifyPassword(enc, "old password")
	require.NoError(t, err)
	require.True(t, ok, "a hash made with other parameters still verifies")
	require.True(t, cheapHasher().NeedsRehash(enc))
	require.False(t, other.NeedsRehash(enc))
}

func TestNeedsRehash(t *testing.T) {
	t.Parallel()
	enc, err := cheapHasher().Hash("pw")
	require.NoError(t, err)
	tests := []struct {
		name string
		h    access.Hasher
		enc  string
		want bool
	}{
		{"Same", cheapHasher(), enc, false},
		{"MoreTime", access.Hasher{Time: 2, MemoryKiB: 64, Threads: 1}, enc, true},
		{"MoreMemory", access.Hasher{Time: 1, MemoryKiB: 128, Threads: 1}, enc, true},
		{"MoreThreads", access.Hasher{Time: 1, MemoryKiB: 64, Threads: 2}, enc, true},
		{"Default", access.DefaultHasher(), refDefault, false},
		{"DefaultVsCheap", access.DefaultHasher(), enc, true},
		{"Malformed", cheapHasher(), "$argon2id$garbage", true},
		{"Empty", cheapHasher(), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, tt.h.NeedsRehash(tt.enc))
		})
	}
}

func TestVerifyTampered(t *testing.T) {
	t.Parallel()
	enc, err := cheapHasher().Hash("secret password")
	require.NoError(t, err)
	parts := strings.Split(enc, "$")
	flip := func(s string) string { // change one base64 character, keeping it canonical
		c := "A"
		if s[0] == 'A' {
			c = "B"
		}
		return c + s[1:]
	}
	for name, p := range map[string][]string{
		"Salt": {"", parts[1], parts[2], parts[3], flip(parts[4]), parts[5]},
		"Key":  {"", parts[1], parts[2], parts[3], parts[4], flip(parts[5])},
		"Time": {"", parts[1], parts[2], "m=64,t=2,p=1", parts[4], parts[5]},
	} {
		ok, err := access.VerifyPassword(strings.Join(p, "$"), "secret password")
		require.NoError(t, err, name)
		require.False(t, ok, name)
	}
}

func TestVerifyMalformed(t *testing.T) {
	t.Parallel()
	const salt, key = "cXVhcnJ5LXNhbHQtMDAwMQ", "sAU/bbZHVftqOilKjnWV6TymnsvMh/PCFid1ycgjwv8"
	tests := []struct{ name, enc string }{
		{"Empty", ""},
		{"Bcrypt", "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"},
		{"Argon2i", "$argon2i$v=19$m=64,t=2,p=2$" + salt + "$" + key},
		{"OldVersion", "$argon2id$v=16$m=64,t=2,p=2$" + salt + "$" + key},
		{"NoVersion", "$argon2id$m=64,t=2,p=2$" + salt + "$" + key},
		{"Reordered", "$argon2id$v=19$t=2,m=64,p=2$" + salt + "$" + key},
		{"ExtraParam", "$argon2id$v=19$m=64,t=2,p=2,k=1$" + salt + "$" + key},
		{"Negative", "$argon2id$v=19$m=-64,t=2,p=2$" + salt + "$" + key},
		{"Overflow", "$argon2id$v=19$m=99999999999,t=2,p=2$" + salt + "$" + key},
		{"ExtraField", "$argon2id$v=19$m=64,t=2,p=2$" + salt + "$" + key + "$x"},
		{"PaddedSalt", "$argon2id$v=19$m=64,t=2,p=2$" + salt + "==$" + key},
		{"BadBase64", "$argon2id$v=19$m=64,t=2,p=2$" + salt + "$" + "***"},
		{"ShortSalt", "$argon2id$v=19$m=64,t=2,p=2$c2FsdA$" + key},
		{"ShortKey", "$argon2id$v=19$m=64,t=2,p=2$" + salt + "$c2hvcnQ"},
		{"LongKey", "$argon2id$v=19$m=64,t=2,p=2$" + salt + "$" + strings.Repeat("A", 200)},
		{"ZeroTime", "$argon2id$v=19$m=64,t=0,p=2$" + salt + "$" + key},
		{"ZeroThreads", "$argon2id$v=19$m=64,t=2,p=0$" + salt + "$" + key},
		{"TooLittleMemory", "$argon2id$v=19$m=8,t=2,p=2$" + salt + "$" + key},
		// Bounds: a tampered row must not buy hours of hashing.
		{"HugeMemory", "$argon2id$v=19$m=4194304,t=2,p=1$" + salt + "$" + key},
		{"JustOver1GiB", "$argon2id$v=19$m=1048577,t=1,p=1$" + salt + "$" + key},
		{"HugeTime", "$argon2id$v=19$m=64,t=4000000000,p=1$" + salt + "$" + key},
		{"TimeOver16", "$argon2id$v=19$m=64,t=17,p=1$" + salt + "$" + key},
		{"ThreadsOver16", "$argon2id$v=19$m=512,t=1,p=17$" + salt + "$" + key},
		{"ThreadsOverUint8", "$argon2id$v=19$m=4096,t=1,p=257$" + salt + "$" + key},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			ok, err := access.VerifyPassword(tt.enc, refPass)
			require.Less(t, time.Since(start), time.Second, "refused before hashing")
			require.False(t, ok)
			require.Error(t, err)
			require.True(t, errors.Is(err, access.ErrMalformedHash), "%v", err)
			require.Equal(t, fault.EInternal, fault.ErrorCode(err), "our data, not the user's input")
		})
	}
}

func TestHashRefusesBadHasher(t *testing.T) {
	t.Parallel()
	for _, h := range []access.Hasher{{}, {Time: 1, MemoryKiB: 64}, {MemoryKiB: 64, Threads: 1}, {Time: 1, MemoryKiB: 4, Threads: 1}, {Time: 1, MemoryKiB: 1<<20 + 1, Threads: 1}} {
		_, err := h.Hash("pw")
		require.Error(t, err, "%+v", h)
		h.Waste("pw") // must not panic either
	}
}

// BenchmarkVerifyAndWaste shows, side by side in one run, that a sign-in
// for an unknown e-mail (Waste) costs what one for a known e-mail does
// (VerifyPassword); a timing is a figure, not a test assertion.
func BenchmarkVerifyAndWaste(b *testing.B) {
	h := access.DefaultHasher()
	enc, err := h.Hash("pw")
	require.NoError(b, err)
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			_, _ = access.VerifyPassword(enc, "pw")
		}
	})
	b.Run("waste", func(b *testing.B) {
		for b.Loop() {
			h.Waste("pw")
		}
	})
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pw string
		ok       bool
	}{
		{"Empty", "", false},
		{"Nine", "123456789", false},
		{"Ten", "1234567890", true},
		{"NoCompositionRules", "aaaaaaaaaaaaaaaa", true},
		{"Spaces", "correct horse battery staple", true},
		{"TenRunesMultibyte", "éééééééééé", true},
		{"NineRunesManyBytes", "😀😀😀😀😀😀😀😀😀", false},
		{"MaxBytes", strings.Repeat("a", 1024), true},
		{"OverMaxBytes", strings.Repeat("a", 1025), false},
		{"InvalidUTF8", "abcdefghij\xff", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := access.CheckPassword(tt.pw)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			require.NotEmpty(t, fault.ErrorFields(err)["password"])
		})
	}
	require.Contains(t, fault.ErrorMessage(access.CheckPassword("short")), "at least 10 characters")
}
