package app

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
)

// credentials resolves an agent's model key and endpoint from the settings:
// the key from the variable the agent names (api_key_env, default the
// provider's own ANTHROPIC_API_KEY or OPENAI_API_KEY), the endpoint from
// the agent's base_url, else ANTHROPIC_BASE_URL or OPENAI_BASE_URL. This is
// the one place keys enter: core reads no environment. core.Service.Start
// builds every agent's backend, so a missing key stops the start with an
// error naming the agent and the variable to set.
func credentials(env config.Env) core.CredentialsFunc {
	return func(a *config.Agent) (model.Credentials, error) {
		spec, err := model.ParseSpec(a.Model)
		if err != nil {
			return model.Credentials{}, fmt.Errorf("model %q: %w", a.Model, err)
		}
		c := model.Credentials{BaseURL: a.BaseURL}
		switch spec.Provider {
		case model.ProviderAnthropic:
			c.APIKey = env(a.KeyEnv())
			if c.BaseURL == "" {
				c.BaseURL = env("ANTHROPIC_BASE_URL")
			}
			if c.APIKey == "" {
				return c, fmt.Errorf("model %s needs a key: set %s", a.Model, a.KeyEnv())
			}
		case model.ProviderOpenAI:
			c.APIKey = env(a.KeyEnv())
			if c.BaseURL == "" {
				c.BaseURL = env("OPENAI_BASE_URL")
			}
			// An OpenAI-compatible server (Ollama, vLLM) may take no key.
			if c.APIKey == "" && c.BaseURL == "" {
				return c, fmt.Errorf("model %s needs a key: set %s (or OPENAI_BASE_URL for a compatible server)", a.Model, a.KeyEnv())
			}
		}
		return c, nil
	}
}
