package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// rendered is the chart's manifests decoded into the Kubernetes API types.
type rendered struct {
	deployments     []appsv1.Deployment
	services        []corev1.Service
	configMaps      []corev1.ConfigMap
	serviceAccounts []corev1.ServiceAccount
	pdbs            []policyv1.PodDisruptionBudget
	jobs            []batchv1.Job
	serviceMonitors []monitoringv1.ServiceMonitor
}

// render renders the chart as `helm template` does with values layered on
// the chart's own, then decodes every manifest strictly: a field the API
// type does not have (a typo, a wrong indent) fails the test.
func render(t *testing.T, values string) (rendered, error) {
	t.Helper()
	ch, err := loader.Load("helm/switchboard")
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	vals, err := common.ReadValues([]byte(values))
	if err != nil {
		t.Fatalf("values %q: %v", values, err)
	}
	top, err := util.ToRenderValues(ch, vals, common.ReleaseOptions{Name: "sb", Namespace: "agents", IsInstall: true, Revision: 1}, nil)
	if err != nil {
		return rendered{}, err
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return rendered{}, err
	}
	var out rendered
	for name, body := range files {
		if strings.HasSuffix(name, "NOTES.txt") || strings.TrimSpace(body) == "" {
			continue
		}
		for i, doc := range strings.Split(body, "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			if err := decode(&out, []byte(doc)); err != nil {
				t.Fatalf("%s (document %d): %v\n%s", name, i, err, doc)
			}
		}
	}
	return out, nil
}

func decode(out *rendered, doc []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	strict := func(v any) error { return yaml.UnmarshalStrict(doc, v) }
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 Deployment":
		var v appsv1.Deployment
		if err := strict(&v); err != nil {
			return err
		}
		out.deployments = append(out.deployments, v)
	case "v1 Service":
		var v corev1.Service
		if err := strict(&v); err != nil {
			return err
		}
		out.services = append(out.services, v)
	case "v1 ConfigMap":
		var v corev1.ConfigMap
		if err := strict(&v); err != nil {
			return err
		}
		out.configMaps = append(out.configMaps, v)
	case "v1 ServiceAccount":
		var v corev1.ServiceAccount
		if err := strict(&v); err != nil {
			return err
		}
		out.serviceAccounts = append(out.serviceAccounts, v)
	case "policy/v1 PodDisruptionBudget":
		var v policyv1.PodDisruptionBudget
		if err := strict(&v); err != nil {
			return err
		}
		out.pdbs = append(out.pdbs, v)
	case "batch/v1 Job":
		var v batchv1.Job
		if err := strict(&v); err != nil {
			return err
		}
		out.jobs = append(out.jobs, v)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		var v monitoringv1.ServiceMonitor
		if err := strict(&v); err != nil {
			return err
		}
		out.serviceMonitors = append(out.serviceMonitors, v)
	default:
		return fmt.Errorf("unexpected kind %q %q: add it to the test's decoder", head.APIVersion, head.Kind)
	}
	return nil
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

func TestChartDefaults(t *testing.T) {
	r, err := render(t, "")
	if err != nil {
		t.Fatalf("rendering with the default values: %v", err)
	}
	if len(r.deployments) != 1 || len(r.services) != 1 || len(r.jobs) != 1 || len(r.pdbs) != 1 || len(r.serviceAccounts) != 1 {
		t.Fatalf("default render: %d deployments, %d services, %d jobs, %d PDBs, %d service accounts; want one each",
			len(r.deployments), len(r.services), len(r.jobs), len(r.pdbs), len(r.serviceAccounts))
	}
	if len(r.serviceMonitors) != 0 || len(r.configMaps) != 0 {
		t.Errorf("default render has %d ServiceMonitors and %d ConfigMaps; both are opt-in", len(r.serviceMonitors), len(r.configMaps))
	}
	d := r.deployments[0]
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want the default 2", d.Spec.Replicas)
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("rolling update %+v: want maxUnavailable 0, so old and new run side by side", ru)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != "ghcr.io/switchboardhq/switchboard:0.1.0" {
		t.Errorf("image %q: want the chart's appVersion as the tag", c.Image)
	}
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe %+v: want an HTTP probe", name, p)
		}
	}
	if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe path %q, want /readyz", c.ReadinessProbe.HTTPGet.Path)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "switchboard" {
		t.Errorf("envFrom %+v: want the existingSecret \"switchboard\"", c.EnvFrom)
	}
	env := envOf(c)
	if e := env["SWITCHBOARD_INSTANCE_ID"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("SWITCHBOARD_INSTANCE_ID %+v: want the pod's name, so replicas never share a lease owner", e)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want memory requests and limits", c.Resources)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container security context %+v: want a read-only root and no privilege escalation", sc)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("pod security context %+v: want runAsNonRoot", psc)
	}
	job := r.jobs[0]
	if hook := job.Annotations["helm.sh/hook"]; hook != "pre-install,pre-upgrade" {
		t.Errorf("migration job hook %q, want pre-install,pre-upgrade", hook)
	}
	if args := job.Spec.Template.Spec.Containers[0].Args; !slices.Equal(args, []string{"migrate"}) {
		t.Errorf("migration job args %v, want [migrate]", args)
	}
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("migration job restart policy %q", job.Spec.Template.Spec.RestartPolicy)
	}
	if r.pdbs[0].Spec.MinAvailable == nil || r.pdbs[0].Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PDB minAvailable %v, want 1", r.pdbs[0].Spec.MinAvailable)
	}
	// The Service selects the Deployment's pods, and only them: the
	// migration job's pods carry a component label of their own.
	sel := r.services[0].Spec.Selector
	for k, v := range sel {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("service selector %v does not select the pods (labels %v)", sel, d.Spec.Template.Labels)
		}
	}
}

func TestChartMultiReplica(t *testing.T) {
	r, err := render(t, `
replicaCount: 6
image: {tag: "1.2.3"}
env:
  SWITCHBOARD_PUBLIC_URL: https://agents.example.com
config: |
  agents:
    - name: helper
serviceMonitor:
  enabled: true
  labels: {release: prom}
migrations:
  job: {enabled: false}
`)
	if err != nil {
		t.Fatalf("rendering with 6 replicas: %v", err)
	}
	d := r.deployments[0]
	if *d.Spec.Replicas != 6 {
		t.Errorf("replicas %d, want 6", *d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "ghcr.io/switchboardhq/switchboard:1.2.3" {
		t.Errorf("image %q", c.Image)
	}
	env := envOf(c)
	if env["SWITCHBOARD_PUBLIC_URL"].Value != "https://agents.example.com" || env["SWITCHBOARD_CONFIG"].Value != "/etc/switchboard/switchboard.yaml" {
		t.Errorf("env %+v: want the values' env and SWITCHBOARD_CONFIG for the mounted file", env)
	}
	if len(r.configMaps) != 1 || !strings.Contains(r.configMaps[0].Data["switchboard.yaml"], "name: helper") {
		t.Errorf("config maps %+v: want switchboard.yaml from the values", r.configMaps)
	}
	if d.Spec.Template.Annotations["checksum/config"] == "" {
		t.Error("no checksum/config annotation: a changed switchboard.yaml would not roll the pods")
	}
	if len(r.jobs) != 0 {
		t.Errorf("%d migration jobs with migrations.job.enabled false", len(r.jobs))
	}
	if len(r.serviceMonitors) != 1 {
		t.Fatalf("%d ServiceMonitors, want 1", len(r.serviceMonitors))
	}
	sm := r.serviceMonitors[0]
	if sm.Labels["release"] != "prom" || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor %+v", sm)
	}
	if a := sm.Spec.Endpoints[0].Authorization; a == nil || a.Credentials == nil || a.Credentials.Name != "switchboard" || a.Credentials.Key != "SWITCHBOARD_API_TOKEN" {
		t.Errorf("ServiceMonitor authorization %+v: want the API token from the existing secret", a)
	}
}

func TestChartRefusesBadValues(t *testing.T) {
	for _, tt := range []struct{ values, want string }{
		{"replicaCount: 11", "replicaCount"}, // Slack's 10 Socket Mode connections
		{"existingSecret: \"\"", "existingSecret"},
		{"replicaCount: 0", "replicaCount"},
	} {
		_, err := render(t, tt.values)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("values %q: error %v, want one naming %s", tt.values, err, tt.want)
		}
	}
	// Over HTTP events Slack takes any number of replicas.
	if _, err := render(t, "replicaCount: 11\nslack: {socketMode: false}"); err != nil {
		t.Errorf("11 replicas without Socket Mode: %v", err)
	}
}
