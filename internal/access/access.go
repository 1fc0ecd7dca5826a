// Package access holds the pure pieces of team accounts: roles and what
// they permit, password hashing and its policy, opaque tokens, e-mail and
// display-name checks, and the login-throttling policy. It keeps no state
// and touches no database or request, so the store and the web layer can
// share one tested definition of each rule; it imports nothing of Quarry's
// but fault.
package access
