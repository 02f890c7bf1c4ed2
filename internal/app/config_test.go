package app

import (
	"strings"
	"testing"
	"time"
)

func TestFromEnvModelIdleTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value   string
		want    time.Duration
		wantErr bool
	}{
		{value: "", want: 0}, // the model package's default applies
		{value: "90s", want: 90 * time.Second},
		{value: "250ms", want: 250 * time.Millisecond},
		{value: "60", wantErr: true}, // a bare number has no unit
		{value: "soon", wantErr: true},
		{value: "0s", wantErr: true},
		{value: "-5s", wantErr: true},
	}
	for _, tt := range tests {
		env := map[string]string{"SWITCHBOARD_MODEL_IDLE_TIMEOUT": tt.value}
		cfg, err := FromEnv(func(k string) string { return env[k] })
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_MODEL_IDLE_TIMEOUT") {
				t.Errorf("FromEnv(%q) error = %v, want one naming SWITCHBOARD_MODEL_IDLE_TIMEOUT", tt.value, err)
			}
			continue
		}
		if err != nil || cfg.ModelIdleTimeout != tt.want {
			t.Errorf("FromEnv(%q) = %s, %v; want %s", tt.value, cfg.ModelIdleTimeout, err, tt.want)
		}
	}
}

func TestFromEnvMemoryBudget(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		value   string
		want    time.Duration
		wantErr bool
	}{
		{value: "", want: 0}, // memory.budget in the file, else 200ms
		{value: "50ms", want: 50 * time.Millisecond},
		{value: "0s", wantErr: true},
		{value: "1m", wantErr: true},
		{value: "fast", wantErr: true},
	} {
		env := map[string]string{"SWITCHBOARD_MEMORY_BUDGET": tt.value}
		cfg, err := FromEnv(func(k string) string { return env[k] })
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_MEMORY_BUDGET") {
				t.Errorf("FromEnv(%q) error = %v, want one naming SWITCHBOARD_MEMORY_BUDGET", tt.value, err)
			}
			continue
		}
		if err != nil || cfg.MemoryBudget != tt.want {
			t.Errorf("FromEnv(%q) = %s, %v; want %s", tt.value, cfg.MemoryBudget, err, tt.want)
		}
	}
}

func TestFromEnvModelBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value string
		wantErr     bool
		check       func(Config) bool
	}{
		{"SWITCHBOARD_MODEL_TIMEOUT", "", false, func(c Config) bool { return c.ModelTimeout == 0 }}, // the model package's 10m
		{"SWITCHBOARD_MODEL_TIMEOUT", "90s", false, func(c Config) bool { return c.ModelTimeout == 90*time.Second }},
		{"SWITCHBOARD_MODEL_TIMEOUT", "600", true, nil}, // a bare number has no unit
		{"SWITCHBOARD_MODEL_TIMEOUT", "forever", true, nil},
		{"SWITCHBOARD_MODEL_TIMEOUT", "0s", true, nil},
		{"SWITCHBOARD_MODEL_TIMEOUT", "-1m", true, nil},
		{"SWITCHBOARD_MAX_REPLY_BYTES", "", false, func(c Config) bool { return c.MaxReplyBytes == 0 }}, // 262144
		{"SWITCHBOARD_MAX_REPLY_BYTES", "65536", false, func(c Config) bool { return c.MaxReplyBytes == 65536 }},
		{"SWITCHBOARD_MAX_REPLY_BYTES", "256KB", true, nil},
		{"SWITCHBOARD_MAX_REPLY_BYTES", "0", true, nil},
		{"SWITCHBOARD_MAX_REPLY_BYTES", "-5", true, nil},
		{"SWITCHBOARD_MAX_REPLY_BYTES", "100", true, nil}, // too small to say anything
	}
	for _, tt := range tests {
		env := map[string]string{tt.name: tt.value}
		cfg, err := FromEnv(func(k string) string { return env[k] })
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), tt.name) {
				t.Errorf("%s=%q: error = %v, want one naming %s", tt.name, tt.value, err, tt.name)
			}
			continue
		}
		if err != nil || !tt.check(cfg) {
			t.Errorf("%s=%q: timeout %s, cap %d, error %v", tt.name, tt.value, cfg.ModelTimeout, cfg.MaxReplyBytes, err)
		}
	}
}
