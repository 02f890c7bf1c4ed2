// Package childenv is the environment Switchboard gives the programs it
// starts (MCP servers over stdio, the coding CLIs): variables of the
// service's environment picked by name, never the whole of it, which holds
// the provider keys, DATABASE_URL, the platform tokens and every
// SWITCHBOARD_* setting.
package childenv

// Base are the variables every program gets when they are set: where to
// find programs (PATH), the user and home folder, the locale, the time
// zone and the temporary folder.
var Base = []string{
	"PATH", "HOME", "USER", "LOGNAME",
	"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME",
	"TZ", "TMPDIR",
}

// From is NAME=value for each of names that getenv has a non-empty value
// for, in the order of names.
func From(getenv func(string) string, names ...string) []string {
	var out []string
	for _, n := range names {
		if v := getenv(n); v != "" {
			out = append(out, n+"="+v)
		}
	}
	return out
}
