package deploy

import (
	"context"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// loadCompose loads ../compose.yaml as `docker compose config` does:
// interpolated, checked against the compose specification's schema,
// normalised and checked for consistency.
func loadCompose(t *testing.T, env []string) (*types.Project, error) {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"../compose.yaml"},
		cli.WithWorkingDirectory(".."), cli.WithEnv(env), cli.WithName("switchboard"))
	if err != nil {
		t.Fatal(err)
	}
	return opts.LoadProject(context.Background())
}

func TestComposeValidates(t *testing.T) {
	p, err := loadCompose(t, []string{"SWITCHBOARD_API_TOKEN=t0ken", "SWITCHBOARD_SECRET_KEY=k3y"})
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	sb, err := p.GetService("switchboard")
	if err != nil {
		t.Fatal(err)
	}
	if sb.Deploy == nil || sb.Deploy.Replicas == nil || *sb.Deploy.Replicas != 2 {
		t.Errorf("switchboard deploy %+v: want 2 replicas", sb.Deploy)
	}
	if len(sb.Ports) != 0 {
		t.Errorf("the replicas publish ports %v: only the proxy should", sb.Ports)
	}
	if got := sb.Environment["SWITCHBOARD_API_TOKEN"]; got == nil || *got != "t0ken" {
		t.Errorf("SWITCHBOARD_API_TOKEN %v, want the caller's", got)
	}
	if got := sb.Environment["DATABASE_URL"]; got == nil || !strings.HasPrefix(*got, "postgres://") {
		t.Errorf("DATABASE_URL %v, want the compose Postgres", got)
	}
	if sb.HealthCheck == nil || len(sb.HealthCheck.Test) == 0 || !strings.Contains(strings.Join(sb.HealthCheck.Test, " "), "healthcheck") {
		t.Errorf("switchboard health check %+v: want the binary's own healthcheck", sb.HealthCheck)
	}
	if dep, ok := sb.DependsOn["migrate"]; !ok || dep.Condition != types.ServiceConditionCompletedSuccessfully {
		t.Errorf("switchboard depends on %+v: want migrate to complete first", sb.DependsOn)
	}
	proxy, err := p.GetService("proxy")
	if err != nil {
		t.Fatal(err)
	}
	if len(proxy.Ports) != 1 || proxy.Ports[0].Target != 8080 || proxy.Ports[0].Published != "8080" {
		t.Errorf("proxy ports %+v: want 8080 published", proxy.Ports)
	}
	if _, err := p.GetService("postgres"); err != nil {
		t.Error(err)
	}
}

// Without the API token the file refuses to start rather than run replicas
// that answer nobody behind the proxy.
func TestComposeNeedsTheToken(t *testing.T) {
	_, err := loadCompose(t, []string{"SWITCHBOARD_SECRET_KEY=k3y"})
	if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_API_TOKEN") {
		t.Fatalf("compose.yaml without SWITCHBOARD_API_TOKEN: %v, want an error naming it", err)
	}
}
