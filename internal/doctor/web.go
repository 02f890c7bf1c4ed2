package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core/config"
	webtool "github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/internal/app"
)

// web checks web_search's provider when web.search names one: its key is
// in the environment and the provider answers one small query with it.
// Agents listing web_fetch are named, with the hosts allow_hosts opens.
func (d *doctor) web(ctx context.Context, agents *config.Config) {
	if agents == nil {
		return
	}
	var fetchers []string
	for _, a := range agents.Agents {
		if slices.Contains(a.Tools, "web_fetch") {
			fetchers = append(fetchers, a.Name)
		}
	}
	if len(fetchers) > 0 {
		allowed := "none"
		if len(agents.Web.AllowHosts) > 0 {
			allowed = strings.Join(agents.Web.AllowHosts, ", ")
		}
		d.add("web fetch", StatusOK, fmt.Sprintf("offered to %s; private hosts allowed: %s", strings.Join(fetchers, ", "), allowed), "")
	}
	s := agents.Web.Search
	if !s.Enabled() {
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	err := app.ProbeWebSearch(ctx, d.o.Config, s)
	var pe *webtool.ProviderError
	refused := errors.As(err, &pe) && (pe.Status == http.StatusUnauthorized || pe.Status == http.StatusForbidden)
	switch {
	case err == nil:
		d.add("web search", StatusOK, fmt.Sprintf("%s answers a search", s.Provider), "")
	case s.APIKeyEnv != "" && d.o.Config.Env(s.APIKeyEnv) == "":
		d.add("web search", StatusFail, err.Error(), fmt.Sprintf("set %s to the %s API key, or remove web.search", s.APIKeyEnv, s.Provider))
	case refused:
		d.add("web search", StatusFail, err.Error(), fmt.Sprintf("the provider refused the key: set a valid key in %s", s.APIKeyEnv))
	default:
		d.add("web search", StatusFail, err.Error(), "check web.search.url and that the provider is reachable (a SearXNG instance must list json in search.formats)")
	}
}

// sso checks single sign-on when SWITCHBOARD_OIDC_ISSUER is set: its
// settings, and that the issuer's discovery document answers.
func (d *doctor) sso(ctx context.Context, agents *config.Config) {
	var section config.SSO
	if agents != nil {
		section = agents.SSO
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	detail, err := app.CheckSSO(ctx, d.o.Config, section, d.o.HTTPClient)
	switch {
	case err != nil:
		d.add("single sign-on", StatusFail, err.Error(), "check SWITCHBOARD_OIDC_ISSUER (the provider's issuer URL; ISSUER/.well-known/openid-configuration must answer), SWITCHBOARD_OIDC_CLIENT_ID and SWITCHBOARD_PUBLIC_URL")
	case detail != "":
		d.add("single sign-on", StatusOK, detail, "")
	}
}
