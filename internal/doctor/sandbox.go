package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/sandbox"
	"github.com/switchboardhq/switchboard/internal/app"
)

// sandbox checks what run_code needs, when switchboard.yaml turns it on
// (sandbox:): bwrap, prlimit and an interpreter, and one real run in a
// sandbox, as serve does at start. It lists the languages found and says
// which agents are offered the tool.
func (d *doctor) sandbox(ctx context.Context, agents *config.Config) {
	if agents == nil || agents.Sandbox == nil {
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	st, err := app.CheckSandbox(ctx, d.o.Config)
	if err != nil {
		d.add("sandbox", StatusFail, err.Error(), "correct the sandbox: section (see docs/tools-sandbox.md)")
		return
	}
	if st.Err != nil {
		fix := "see docs/tools-sandbox.md, What the host needs"
		if errors.Is(st.Err, sandbox.ErrUnavailable) && strings.Contains(st.Err.Error(), "bubblewrap") {
			fix = "install bubblewrap (apt-get install bubblewrap) or set sandbox.bwrap"
		}
		d.add("sandbox", StatusFail, "run_code is not offered: "+st.Err.Error(), fix)
		return
	}
	var langs, missing []string
	for _, l := range st.Languages {
		langs = append(langs, string(l))
	}
	for _, l := range sandbox.Languages {
		if why, ok := st.Missing[l]; ok {
			missing = append(missing, fmt.Sprintf("%s (%s)", l, why))
		}
	}
	var users []string
	for _, a := range agents.Agents {
		if slices.Contains(a.Tools, sandbox.ToolRunCode) {
			users = append(users, a.Name)
		}
	}
	detail := fmt.Sprintf("run_code ready, risk %s; languages: %s", st.Risk, strings.Join(langs, ", "))
	if len(missing) > 0 {
		detail += "; not available: " + strings.Join(missing, ", ")
	}
	if len(users) == 0 {
		d.add("sandbox", StatusWarn, detail+"; no agent names run_code in its tools", "add run_code to the tools of the agents that should run code")
		return
	}
	d.add("sandbox", StatusOK, detail+"; offered to "+strings.Join(users, ", "), "")
}
