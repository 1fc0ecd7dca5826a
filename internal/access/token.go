package access

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// tokenBytes is a token's randomness: 256 bits cannot be guessed, so an
// unsalted SHA-256 is enough to store it.
const tokenBytes = 32

// tokenShown is how many random characters TokenPrefix keeps: enough to
// tell a user's tokens apart, far too few to help guess one.
const tokenShown = 8

// NewToken returns prefix followed by 32 random bytes in unpadded URL-safe
// base64 (43 characters). The prefix ("qk_", "qs_", …) says what kind of
// secret it is, so a leaked one is recognisable (and scannable); it must
// be letters or digits ending in its only underscore, which is where
// TokenPrefix looks.
func NewToken(prefix string) (string, error) {
	body, ok := strings.CutSuffix(prefix, "_")
	if !ok || body == "" || strings.IndexFunc(body, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) >= 0 {
		return "", fmt.Errorf("access: token prefix %q must be letters or digits followed by one underscore", prefix)
	}
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("access: token: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashToken is what is stored for a token (sessions, invitations, API
// tokens, share links): its SHA-256 in lowercase hex. A copy of the
// database then holds nothing that can be presented as a token, and a
// lookup by hash needs no constant-time comparison.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TokenPrefix is the part of a token that may be shown to say which one it
// is ("qk_AbCdEfGh" for display as "qk_AbCdEfGh…"): the kind prefix up to
// its underscore and the first 8 characters after it. Store it beside the
// hash when the token is made; the token itself is shown once.
func TokenPrefix(token string) string {
	start := strings.IndexByte(token, '_') + 1 // 0 when there is no prefix
	end := min(start+tokenShown, len(token))
	return token[:end]
}
