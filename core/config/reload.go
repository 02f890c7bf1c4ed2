package config

import "time"

// ReloadStatus is the outcome of the last reload of the configuration
// files (switchboard.yaml and mcp-servers.json), as GET /api/config/status
// answers it and `switchboard doctor` reads it.
type ReloadStatus struct {
	// LoadedAt is when the configuration in use was loaded (the start, or
	// the last reload applied).
	LoadedAt time.Time `json:"loaded_at"`
	// Reloads counts the reloads applied since the start.
	Reloads int `json:"reloads"`
	// LastError is why the last reload was refused, when it was; it is
	// cleared by the next one applied.
	LastError string     `json:"last_error,omitempty"`
	ErrorAt   *time.Time `json:"error_at,omitempty"`
	// Files are the files watched for a change.
	Files []string `json:"files"`
}
