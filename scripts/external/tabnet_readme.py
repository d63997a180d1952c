# pytorch-tabnet's README classifier (pip install pytorch-tabnet; 4.1) on generated data, with eval metrics and early stopping.
import numpy as np
from pytorch_tabnet.tab_model import TabNetClassifier
rng = np.random.default_rng(0)
X = rng.normal(size=(4000, 12)).astype(np.float32)
y = ((X[:, 0] + X[:, 1] * X[:, 2]) > 0).astype(np.int64)
clf = TabNetClassifier(seed=0, verbose=1)
clf.fit(X[:3200], y[:3200], eval_set=[(X[:3200], y[:3200]), (X[3200:], y[3200:])], eval_name=["train", "valid"],
        eval_metric=["auc", "accuracy"], max_epochs=3, patience=5, batch_size=256, virtual_batch_size=64)
print("pred", clf.predict_proba(X[3200:]).shape)
