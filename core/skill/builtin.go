package skill

import (
	"embed"
	"fmt"
	"io/fs"
)

//go:embed builtin
var builtin embed.FS

// Builtin returns the skills the binary ships (platform layer).
func Builtin() ([]*Skill, error) {
	sub, err := fs.Sub(builtin, "builtin")
	if err != nil {
		return nil, err
	}
	c := newCollector("builtin", Limits{})
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		c.files[p] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the built-in skills: %w", err)
	}
	return c.skills()
}
