package biblio

import "strings"

// subscripts and superscripts are the characters Unicode has a sub- or
// superscript form of, so that Cu$_2$O (BibTeX) and Cu<sub>2</sub>O
// (CSL-JSON) both read as Cu₂O, the way a reference manager shows it.
var (
	subscripts   = pairs("0₀1₁2₂3₃4₄5₅6₆7₇8₈9₉+₊-₋−₋=₌(₍)₎a ₐe ₑo ₒx ₓh ₕk ₖl ₗm ₘn ₙp ₚs ₛt ₜi ᵢj ⱼr ᵣu ᵤv ᵥ")
	superscripts = pairs("0⁰1¹2²3³4⁴5⁵6⁶7⁷8⁸9⁹+⁺-⁻−⁻=⁼(⁽)⁾n ⁿi ⁱa ᵃb ᵇc ᶜd ᵈe ᵉf ᶠg ᵍh ʰj ʲk ᵏl ˡm ᵐo ᵒp ᵖr ʳs ˢt ᵗu ᵘv ᵛw ʷx ˣy ʸz ᶻA ᴬB ᴮD ᴰE ᴱG ᴳH ᴴI ᴵJ ᴶK ᴷL ᴸM ᴹN ᴺO ᴼP ᴾR ᴿT ᵀU ᵁW ᵂ*﹡")
)

// pairs reads "0₀1₁..." (a blank after an ASCII letter is padding) into a map.
func pairs(s string) map[rune]rune {
	m := map[rune]rune{}
	rs := []rune(strings.ReplaceAll(s, " ", ""))
	for i := 0; i+1 < len(rs); i += 2 {
		m[rs[i]] = rs[i+1]
	}
	return m
}

// Subscript returns s in Unicode subscript characters, or ok false when
// one of them has none (the caller then keeps s as it is).
func Subscript(s string) (string, bool) { return script(s, subscripts) }

// Superscript returns s in Unicode superscript characters, or ok false
// when one of them has none.
func Superscript(s string) (string, bool) { return script(s, superscripts) }

func script(s string, m map[rune]rune) (string, bool) {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		t, ok := m[r]
		if !ok {
			return s, false
		}
		b.WriteRune(t)
	}
	return b.String(), b.Len() > 0
}
