package access

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"quarry/internal/fault"
)

// Password length limits, after NIST SP 800-63B: length is what makes a
// password strong, so there is a floor and no composition rules; the
// ceiling only stops a request from making us hash megabytes.
const (
	MinPasswordRunes = 10
	MaxPasswordBytes = 1024
)

// Hash shape: a 16-byte salt and a 32-byte key, as RFC 9106 recommends.
const (
	saltLen = 16
	keyLen  = 32
)

// Bounds on the parameters VerifyPassword accepts from a stored hash. The
// parameters come from the database, so a tampered or corrupt row must not
// be able to make one login allocate gigabytes or run for minutes.
const (
	maxMemoryKiB = 1 << 20 // 1 GiB
	maxTime      = 16
	maxThreads   = 16
	minSaltLen   = 8
	maxSaltLen   = 64
	minKeyLen    = 16
	maxKeyLen    = 64
)

// Hasher holds argon2id's cost parameters. They are a value, not a global,
// so tests can hash cheaply and a deployment can raise the cost later;
// NeedsRehash tells a login when a stored hash is behind.
type Hasher struct {
	Time      uint32 // passes over memory
	MemoryKiB uint32 // memory in KiB
	Threads   uint8  // lanes
}

// DefaultHasher is OWASP's argon2id recommendation (m=19456 KiB, t=2, p=1):
// about 20 MiB and a few tens of milliseconds per hash, affordable for a
// login and expensive for an attacker who has the table.
func DefaultHasher() Hasher { return Hasher{Time: 2, MemoryKiB: 19456, Threads: 1} }

// params is a hash's decoded PHC fields.
type params struct {
	time, memory uint32
	threads      uint8
	salt, key    []byte
}

// check refuses cost parameters outside the bounds, before any work is done.
func (h Hasher) check() error {
	switch {
	case h.Time < 1 || h.Time > maxTime:
		return fmt.Errorf("access: argon2 time %d outside 1..%d", h.Time, maxTime)
	case h.Threads < 1 || h.Threads > maxThreads:
		return fmt.Errorf("access: argon2 threads %d outside 1..%d", h.Threads, maxThreads)
	case h.MemoryKiB < 8*uint32(h.Threads) || h.MemoryKiB > maxMemoryKiB:
		// argon2 needs 8 KiB per lane.
		return fmt.Errorf("access: argon2 memory %d KiB outside %d..%d", h.MemoryKiB, 8*uint32(h.Threads), maxMemoryKiB)
	}
	return nil
}

// Hash returns password's argon2id hash as a PHC string
// ($argon2id$v=19$m=…,t=…,p=…$salt$key, unpadded standard base64 as the
// reference implementation writes it), so the parameters travel with the
// hash and old hashes still verify after the cost is raised.
func (h Hasher) Hash(password string) (string, error) {
	if err := h.check(); err != nil {
		return "", err
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("access: salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, h.Time, h.MemoryKiB, h.Threads, keyLen)
	return encodeHash(h, salt, key), nil
}

func encodeHash(h Hasher, salt, key []byte) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.MemoryKiB, h.Time, h.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// ErrMalformedHash is wrapped by every parse failure, so a caller can tell a
// damaged stored hash (log it, our data is broken) from a wrong password.
var ErrMalformedHash = errors.New("access: malformed password hash")

// decodeHash parses a PHC argon2id string strictly and within the bounds.
func decodeHash(encoded string) (params, error) {
	var p params
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, fmt.Errorf("%w: not $argon2id$v=…$m=…,t=…,p=…$salt$key", ErrMalformedHash)
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return p, fmt.Errorf("%w: version %q", ErrMalformedHash, parts[2])
	}
	kv := strings.Split(parts[3], ",")
	if len(kv) != 3 {
		return p, fmt.Errorf("%w: parameters %q", ErrMalformedHash, parts[3])
	}
	var vals [3]uint64
	for i, name := range []string{"m=", "t=", "p="} {
		s, ok := strings.CutPrefix(kv[i], name)
		if !ok {
			return p, fmt.Errorf("%w: parameters %q", ErrMalformedHash, parts[3])
		}
		v, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return p, fmt.Errorf("%w: parameter %q", ErrMalformedHash, kv[i])
		}
		vals[i] = v
	}
	if vals[2] > maxThreads {
		return p, fmt.Errorf("%w: argon2 threads %d over %d", ErrMalformedHash, vals[2], maxThreads)
	}
	h := Hasher{MemoryKiB: uint32(vals[0]), Time: uint32(vals[1]), Threads: uint8(vals[2])}
	if err := h.check(); err != nil {
		return p, fmt.Errorf("%w: %w", ErrMalformedHash, err)
	}
	salt, err := base64.RawStdEncoding.Strict().DecodeString(parts[4])
	if err != nil || len(salt) < minSaltLen || len(salt) > maxSaltLen {
		return p, fmt.Errorf("%w: salt", ErrMalformedHash)
	}
	key, err := base64.RawStdEncoding.Strict().DecodeString(parts[5])
	if err != nil || len(key) < minKeyLen || len(key) > maxKeyLen {
		return p, fmt.Errorf("%w: key", ErrMalformedHash)
	}
	return params{time: h.Time, memory: h.MemoryKiB, threads: h.Threads, salt: salt, key: key}, nil
}

// VerifyPassword reports whether password matches the PHC hash encoded,
// using the parameters written in the hash. A wrong password is (false,
// nil); a hash that cannot be read is an error (a plain one: it is our
// data that is broken, not the user's input).
func VerifyPassword(encoded, password string) (bool, error) {
	p, err := decodeHash(encoded)
	if err != nil {
		return false, err
	}
	key := argon2.IDKey([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1, nil
}

// NeedsRehash reports whether encoded was made with other parameters than
// h's (or cannot be read), so a successful login can store a fresh hash
// at today's cost.
func (h Hasher) NeedsRehash(encoded string) bool {
	p, err := decodeHash(encoded)
	if err != nil {
		return true
	}
	return p.time != h.Time || p.memory != h.MemoryKiB || p.threads != h.Threads ||
		len(p.salt) != saltLen || len(p.key) != keyLen
}

// Waste does the work of verifying password against a hash made by h and
// throws the answer away. A login for an unknown e-mail calls it, so it
// takes as long as one for a known e-mail and timing does not tell an
// attacker which addresses have accounts.
func (h Hasher) Waste(password string) {
	if h.check() != nil {
		return
	}
	salt := make([]byte, saltLen) // fixed: nothing is stored or compared for real
	want := make([]byte, keyLen)
	key := argon2.IDKey([]byte(password), salt, h.Time, h.MemoryKiB, h.Threads, keyLen)
	subtle.ConstantTimeCompare(key, want)
}

// CheckPassword applies the password policy of NIST SP 800-63B: at least
// MinPasswordRunes characters, at most MaxPasswordBytes bytes, any
// characters, no composition rules (they make passwords weaker in
// practice, not stronger).
func CheckPassword(pw string) error {
	var msg string
	switch {
	case !utf8.ValidString(pw):
		msg = "password must be text (valid UTF-8)"
	case utf8.RuneCountInString(pw) < MinPasswordRunes:
		msg = fmt.Sprintf("password must be at least %d characters long", MinPasswordRunes)
	case len(pw) > MaxPasswordBytes:
		msg = fmt.Sprintf("password must be at most %d bytes long", MaxPasswordBytes)
	default:
		return nil
	}
	return &fault.Error{Code: fault.EInvalid, Message: msg, Fields: map[string]string{"password": msg}}
}
