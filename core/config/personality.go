package config

import (
	"fmt"
	"unicode/utf8"
)

// Defaults of PersonalityGuard.
const (
	DefaultPersonalityMinRatio = 0.5
	DefaultPersonalityMinChars = 200
)

// PersonalityGuard is what keeps an agent from wiping out its own
// personality document with update_personality: a replacement shorter than
// MinRatio of the current document, or than MinChars characters, is
// refused. The operator's replacements (CLI, API) are not guarded.
//
//	personality: {min_ratio: 0.5, min_chars: 200}
type PersonalityGuard struct {
	// MinRatio is the smallest share of the current document's length a
	// replacement may have, from 0 to 1; 0 means the default.
	MinRatio float64 `yaml:"min_ratio,omitempty" json:"min_ratio,omitempty" default:"0.5"`
	// MinChars is the fewest characters a replacement may have; 0 means
	// the default.
	MinChars int `yaml:"min_chars,omitempty" json:"min_chars,omitempty" default:"200"`
}

func (g PersonalityGuard) ratio() float64 {
	if g.MinRatio == 0 {
		return DefaultPersonalityMinRatio
	}
	return g.MinRatio
}

func (g PersonalityGuard) chars() int {
	if g.MinChars == 0 {
		return DefaultPersonalityMinChars
	}
	return g.MinChars
}

func (g PersonalityGuard) validate() error {
	if g.MinRatio < 0 || g.MinRatio > 1 {
		return fmt.Errorf("personality.min_ratio %v must be between 0 and 1", g.MinRatio)
	}
	if g.MinChars < 0 {
		return fmt.Errorf("personality.min_chars %d must not be negative", g.MinChars)
	}
	return nil
}

// Check says why replacement may not replace current, in words meant for
// the agent that tried; nil when it may. Lengths are counted in characters.
func (g PersonalityGuard) Check(current, replacement string) error {
	cur, next := utf8.RuneCountInString(current), utf8.RuneCountInString(replacement)
	if next < g.chars() {
		return fmt.Errorf("the new personality document has %d characters, fewer than the %d it must keep; "+
			"edit the current document (read it with read_personality) rather than replacing it with a short one", next, g.chars())
	}
	if float64(next) < g.ratio()*float64(cur) {
		return fmt.Errorf("the new personality document has %d characters, under %.0f%% of the current %d; "+
			"it would lose too much of who you are. Keep what still holds and change only what should change", next, g.ratio()*100, cur)
	}
	return nil
}
