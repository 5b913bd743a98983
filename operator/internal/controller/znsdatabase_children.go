package controller

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/operator/internal/podprogress"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// reconcileSecret makes sure the root password Secret exists. A user-named Secret is only read; a generated
// one is created once and never rewritten, since mysqld keeps the password it was initialised with. The
// accepted Secret is recorded in status.rootPasswordSecretName, after which admission refuses another one.
func (r *ZNSDatabaseReconciler) reconcileSecret(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	// Before a Secret was accepted no mysqld has its password, so another Secret (or a generated one) may
	// still be named instead; afterwards only this one will do.
	orOther := ", or remove spec.rootPasswordSecretName to have a random one generated"
	if db.Status.RootPasswordSecretName != "" {
		orOther = " (mysqld keeps the password it was initialised with, so the database cannot switch to another Secret)"
	}
	secret := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.RootSecretName()}, secret)
	switch {
	case err == nil:
		password, ok := secret.Data[v1alpha1.RootPasswordKey]
		if !ok {
			msg := fmt.Sprintf("Secret %q has no key %q; add the root password under that key", secret.Name, v1alpha1.RootPasswordKey)
			return r.blockOnSecret(db, v1alpha1.ReasonSecretMissing, event.SecretMissing, msg), nil
		}
		// The benchmark runner replaces the password wherever it would print it; a short one would blank out
		// ordinary words in every error ("x" in "exit"), so it is refused before anything uses it.
		if n := utf8.RuneCount(password); n < v1alpha1.MinPasswordLength {
			msg := fmt.Sprintf("the password in Secret %q (key %q) has %d character(s), at least %d are required so that it can be redacted from benchmark output without hiding other text; set a longer one%s",
				secret.Name, v1alpha1.RootPasswordKey, n, v1alpha1.MinPasswordLength, orOther)
			return r.blockOnSecret(db, v1alpha1.ReasonPasswordTooShort, event.PasswordTooShort, msg), nil
		}
		db.Status.RootPasswordSecretName = db.RootSecretName()
		return nil, nil
	case !apierrors.IsNotFound(err):
		return nil, err
	case db.Spec.RootPasswordSecretName != "" || db.Status.RootPasswordSecretName != "":
		// A generated Secret that was accepted and then deleted is not generated again: the new random
		// password would not be mysqld's.
		msg := fmt.Sprintf("Secret %q not found in namespace %q: create it with the root password under key %q%s",
			db.RootSecretName(), db.Namespace, v1alpha1.RootPasswordKey, orOther)
		return r.blockOnSecret(db, v1alpha1.ReasonSecretMissing, event.SecretMissing, msg), nil
	}
	password, err := randomPassword(32)
	if err != nil {
		return nil, err
	}
	if err := r.Create(ctx, resources.GeneratedSecret(db, password)); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	event.SecretGenerated.Emit(db, r.Recorder, db.GeneratedSecretName())
	db.Status.RootPasswordSecretName = db.RootSecretName()
	return nil, nil
}

func (r *ZNSDatabaseReconciler) blockOnSecret(db *v1alpha1.ZNSDatabase, reason string, e event.Event, msg string) *ctrl.Result {
	if !isBlockedBy(db, reason) {
		e.Emit(db, r.Recorder, msg)
	}
	blocked(db, reason, msg)
	return &ctrl.Result{RequeueAfter: r.BlockedRetry}
}

// isBlockedBy reports whether the Available condition already carries reason, so that a repeated reconcile
// does not repeat the Event.
func isBlockedBy(db *v1alpha1.ZNSDatabase, reason string) bool {
	for _, c := range db.Status.Conditions {
		if c.Type == v1alpha1.ConditionAvailable && c.Reason == reason && c.ObservedGeneration == db.Generation {
			return true
		}
	}
	return false
}

const passwordAlphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

func randomPassword(n int) (string, error) {
	b := make([]byte, n)
	max := big.NewInt(int64(len(passwordAlphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		b[i] = passwordAlphabet[k.Int64()]
	}
	return string(b), nil
}

// MyCnfInput is the generator input for db in the given profile, shared with tests.
func MyCnfInput(db *v1alpha1.ZNSDatabase, profile v1alpha1.Profile) mycnf.Input {
	var zenfsDevice string
	if db.UsesZenFS() {
		zenfsDevice = db.ZonedDeviceName()
	}
	return mycnf.Input{
		Flavor:           mycnf.Flavor(db.Spec.Flavor),
		Engine:           mycnf.Engine(db.Spec.Engine),
		Profile:          mycnf.Profile(profile),
		Version:          mycnf.Version(db.ServerVersion()),
		ZenFSDevice:      zenfsDevice,
		MemoryLimitBytes: resources.MemoryLimitBytes(db),
		DataDir:          v1alpha1.DataDir,
		Socket:           v1alpha1.SocketPath,
		PidFile:          v1alpha1.PidFilePath,
		Port:             v1alpha1.MySQLPort,
		ServerID:         1,
		Overrides:        db.Spec.Config,
	}
}

// reconcileConfigMap generates my.cnf and applies it under a content-hash name.
func (r *ZNSDatabaseReconciler) reconcileConfigMap(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	cnf, err := mycnf.Generate(MyCnfInput(db, st.profile))
	if err != nil {
		msg := fmt.Sprintf("cannot generate the mysqld configuration: %v", err)
		if !isBlockedBy(db, v1alpha1.ReasonInvalidConfig) {
			event.ConfigInvalid.Emit(db, r.Recorder, msg)
		}
		setCondition(db, v1alpha1.ConditionConfigReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidConfig, msg)
		blocked(db, v1alpha1.ReasonInvalidConfig, msg)
		return &ctrl.Result{}, nil
	}
	name := resources.ConfigMapName(db, cnf)
	if err := r.apply(ctx, resources.ConfigMap(db, cnf)); err != nil {
		return nil, err
	}
	if db.Status.ConfigMapName != name {
		event.ConfigUpdated.Emit(db, r.Recorder, name)
		// A lease's profile changes the configuration without a new generation, so the condition's
		// observedGeneration cannot tell that Available described the previous one: it is withdrawn here, in
		// the same status write as status.profile, until the pod runs the new configuration.
		if db.Status.ConfigMapName != "" && isAvailable(db) {
			setCondition(db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonStarting,
				fmt.Sprintf("the configuration changed (%s profile, ConfigMap %s): waiting for pod %s to run it", st.profile, name, db.PodName()))
		}
	}
	st.configMapName = name
	db.Status.ConfigMapName = name
	msg := fmt.Sprintf("%s profile for %s on %s in ConfigMap %s", st.profile, db.Spec.Engine, db.Spec.Flavor, name)
	if st.heldBy != "" {
		msg += fmt.Sprintf(" (the profile of Benchmark %s's lease; spec.profile %s applies when it ends)", st.heldBy, db.Spec.Profile)
	}
	setCondition(db, v1alpha1.ConditionConfigReady, metav1.ConditionTrue, v1alpha1.ReasonGenerated, msg)
	return nil, nil
}

func (r *ZNSDatabaseReconciler) reconcileService(ctx context.Context, st *state) (*ctrl.Result, error) {
	st.db.Status.Endpoint = st.db.Endpoint()
	return nil, r.apply(ctx, resources.Service(st.db))
}

// reconcileStatefulSet applies the StatefulSet once the device (if any) passed its preflight.
func (r *ZNSDatabaseReconciler) reconcileStatefulSet(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	image, err := resources.Image(db, r.Images)
	if err != nil {
		blocked(db, v1alpha1.ReasonNoImage, err.Error())
		return &ctrl.Result{}, nil
	}
	st.image = image
	return nil, r.apply(ctx, resources.StatefulSet(db, resources.StatefulSetInput{Image: image, ConfigMapName: st.configMapName,
		ProbePeriodSeconds: int32(r.ProbePeriod / time.Second)}))
}

// reconcileAvailability reads the StatefulSet and its pod into the Available condition and the ZenFS status.
func (r *ZNSDatabaseReconciler) reconcileAvailability(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	if db.UsesZenFS() {
		if err := r.readZenFSSpace(ctx, db); err != nil {
			return nil, err
		}
		// Whatever the StatefulSet says: its readiness probe fails then too, but only this names the cause.
		if msg, err := r.notOnZenFS(ctx, db); err != nil || msg != "" {
			return nil, err
		}
	}
	sts := &appsv1.StatefulSet{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.StatefulSetName()}, sts); err != nil {
		return nil, err
	}
	// A StatefulSet read from the cache right after it was applied may still be the previous one, ready with the
	// previous configuration: it counts only once it points at the current ConfigMap.
	ready := pointsAtConfigMap(sts, st.configMapName) &&
		sts.Status.ObservedGeneration >= sts.Generation &&
		sts.Status.ReadyReplicas >= 1 &&
		sts.Status.UpdatedReplicas >= 1 &&
		(sts.Status.UpdateRevision == "" || sts.Status.CurrentRevision == sts.Status.UpdateRevision)
	if ready {
		if !isAvailable(db) {
			event.Available.Emit(db, r.Recorder, db.Endpoint())
		}
		setCondition(db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, v1alpha1.ReasonMySQLReady, "mysqld accepts connections at "+db.Endpoint())
		setCondition(db, v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonStable, "the pod runs the current configuration")
		return nil, nil
	}
	progress, err := r.podProgress(ctx, db)
	if err != nil {
		return nil, err
	}
	if progress.Stalled() {
		// A start that cannot finish by waiting: the condition and an Event (once per stall) say why, in place of
		// a "waiting" that would last until someone looked at the pod.
		msg := fmt.Sprintf("pod %s: %s; %s", db.PodName(), progress.Message, stallHint[progress.Stall])
		if !isBlockedBy(db, progress.Stall) {
			event.PodStalled(progress.Stall).Emit(db, r.Recorder, msg)
		}
		setCondition(db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, progress.Stall, msg)
		setCondition(db, v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonRollingOut, msg)
		return nil, nil
	}
	msg := fmt.Sprintf("waiting for pod %s to run the current configuration and become ready; now: %s", db.PodName(), progress.Message)
	setCondition(db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonStarting, msg)
	setCondition(db, v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonRollingOut, msg)
	return nil, nil
}

// stallHint says where to look for each kind of stall.
var stallHint = map[string]string{
	v1alpha1.ReasonPodUnschedulable:     "check the node's free memory and CPU against spec.resources, and its taints (kubectl describe node)",
	v1alpha1.ReasonCrashLoopBackOff:     "mysqld's log says why (kubectl logs --previous on the pod)",
	v1alpha1.ReasonImagePullBackOff:     "check the image name (the operator's image flags or spec.image) and that the node can pull or already holds it",
	v1alpha1.ReasonContainerCannotStart: "kubectl describe pod on it shows the kubelet's events",
}

// podProgress reads the database's mysqld pod (from the cache; pods wake the database) and says what it is doing.
func (r *ZNSDatabaseReconciler) podProgress(ctx context.Context, db *v1alpha1.ZNSDatabase) (podprogress.Progress, error) {
	pod := &corev1.Pod{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.PodName()}, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return podprogress.Describe(nil), nil
		}
		return podprogress.Progress{}, err
	}
	return podprogress.Describe(pod), nil
}

func isAvailable(db *v1alpha1.ZNSDatabase) bool {
	for _, c := range db.Status.Conditions {
		if c.Type == v1alpha1.ConditionAvailable {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// cleanupConfigMaps deletes the ConfigMaps of earlier configurations once the StatefulSet points at the
// current one.
func (r *ZNSDatabaseReconciler) cleanupConfigMaps(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	list := &corev1.ConfigMapList{}
	if err := r.List(ctx, list, client.InNamespace(db.Namespace), client.MatchingLabels(db.Labels(resources.ComponentConfig))); err != nil {
		return nil, err
	}
	for i := range list.Items {
		cm := &list.Items[i]
		if cm.Name == st.configMapName || !metav1.IsControlledBy(cm, db) {
			continue
		}
		if err := r.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
	}
	return nil, nil
}

func pointsAtConfigMap(sts *appsv1.StatefulSet, name string) bool {
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == name {
			return true
		}
	}
	return false
}
