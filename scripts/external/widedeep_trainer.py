"""pytorch-widedeep 1.7 on a generated table: a Wide and a TabMlp in a WideDeep model,
its Trainer with LRHistory, EarlyStopping and ModelCheckpoint (best only) callbacks,
a validation split, then predict.

    python3 scripts/external/widedeep_trainer.py
"""
import numpy as np
import pandas as pd
from pytorch_widedeep import Trainer
from pytorch_widedeep.callbacks import EarlyStopping, LRHistory, ModelCheckpoint
from pytorch_widedeep.metrics import Accuracy
from pytorch_widedeep.models import TabMlp, WideDeep, Wide
from pytorch_widedeep.preprocessing import TabPreprocessor, WidePreprocessor

rng = np.random.default_rng(0)
n = 3000
df = pd.DataFrame({
    "city": rng.choice(["a", "b", "c", "d", "e"], n),
    "job": rng.choice(["x", "y", "z"], n),
    "age": rng.integers(18, 80, n).astype(float),
    "hours": rng.normal(40, 8, n),
})
df["target"] = ((df["age"] > 40) ^ (df["city"].isin(["a", "b"]))).astype(int)
wide_prep = WidePreprocessor(wide_cols=["city", "job"], crossed_cols=[("city", "job")])
X_wide = wide_prep.fit_transform(df)
tab_prep = TabPreprocessor(cat_embed_cols=["city", "job"], continuous_cols=["age", "hours"])
X_tab = tab_prep.fit_transform(df)
wide = Wide(input_dim=int(np.unique(X_wide).shape[0]), pred_dim=1)
deep = TabMlp(column_idx=tab_prep.column_idx, cat_embed_input=tab_prep.cat_embed_input,
              continuous_cols=["age", "hours"], mlp_hidden_dims=[32, 16])
model = WideDeep(wide=wide, deeptabular=deep)
trainer = Trainer(model, objective="binary", metrics=[Accuracy],
                  callbacks=[LRHistory(n_epochs=4), EarlyStopping(patience=2),
                             ModelCheckpoint(filepath="wd_ckpt/model", save_best_only=True)],
                  verbose=1)
y = df["target"].values
trainer.fit(X_wide=X_wide, X_tab=X_tab, target=y, n_epochs=4, batch_size=128, val_split=0.2)
preds = trainer.predict(X_wide=X_wide[:500], X_tab=X_tab[:500])
print("history", {k: v[-1] for k, v in trainer.history.items()}, preds.shape)
