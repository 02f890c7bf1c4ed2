package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
)

// bridge reports the bridges connected for a runs_on: bridge agent, from
// the running service's GET /api/bridges when doctor has its address: its
// model runs on those machines, not here, so nothing is probed locally.
func (d *doctor) bridge(ctx context.Context, a *config.Agent) {
	check := "model " + a.Name
	start := fmt.Sprintf("start `switchboard bridge -url URL -agent %s` on the agent's machine (docs/bridge.md)", a.Name)
	if d.o.ServiceURL == "" {
		d.add(check, StatusSkip, a.Model+" runs on a bridge (runs_on: bridge)", "run doctor with -url pointing at the running service to see its bridges")
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(d.o.ServiceURL, "/")+"/api/bridges", nil)
	if err != nil {
		d.add(check, StatusFail, err.Error(), "")
		return
	}
	if d.o.Config.APIToken != "" {
		req.Header.Set("Authorization", "Bearer "+d.o.Config.APIToken)
	}
	resp, err := d.o.HTTPClient.Do(req)
	if err != nil {
		d.add(check, StatusWarn, "asking the service for its bridges: "+err.Error(), "check -url")
		return
	}
	defer resp.Body.Close()
	var body struct {
		Bridges []core.BridgeInfo `json:"bridges"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		d.add(check, StatusWarn, "the service answered GET /api/bridges with "+resp.Status, "set SWITCHBOARD_API_TOKEN to the service's operator token")
		return
	}
	var lines []string
	for _, b := range body.Bridges {
		for _, name := range b.Agents {
			if name == a.Name {
				lines = append(lines, fmt.Sprintf("%s (%s, heartbeat %s ago)", b.ID, b.Version, time.Since(b.LastHeartbeat).Round(time.Second)))
			}
		}
	}
	if len(lines) == 0 {
		d.add(check, StatusWarn, a.Model+" runs on a bridge, and none is connected: its turns wait bridge.wait, then say so", start)
		return
	}
	d.add(check, StatusOK, a.Model+" on bridge "+strings.Join(lines, ", "), "")
}
