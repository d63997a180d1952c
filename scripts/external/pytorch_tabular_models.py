"""pytorch_tabular 1.2.0 (Lightning underneath) on a generated table: a
category-embedding MLP, FT-Transformer and TabNet, each fit with early
stopping, evaluated and used to predict.

    python3 scripts/external/pytorch_tabular_models.py
"""
import numpy as np
import pandas as pd
from sklearn.datasets import make_classification
from pytorch_tabular import TabularModel
from pytorch_tabular.config import DataConfig, OptimizerConfig, TrainerConfig
from pytorch_tabular.models import CategoryEmbeddingModelConfig, FTTransformerConfig, TabNetModelConfig

X, y = make_classification(n_samples=3000, n_features=12, n_informative=6, random_state=0)
df = pd.DataFrame(X, columns=[f"num_{i}" for i in range(10)] + ["c0", "c1"])
df["c0"] = (df["c0"] > 0).astype(int).astype(str)
df["c1"] = pd.cut(df["c1"], 5, labels=False).astype(str)
df["target"] = y
train, test = df.iloc[:2400], df.iloc[2400:]
data_config = DataConfig(target=["target"], continuous_cols=[f"num_{i}" for i in range(10)],
                         categorical_cols=["c0", "c1"])
trainer_config = TrainerConfig(batch_size=128, max_epochs=4, accelerator="cpu", early_stopping="valid_loss",
                               checkpoints="valid_loss", load_best=True, progress_bar="none")
for model_config in (CategoryEmbeddingModelConfig(task="classification", layers="64-32"),
                     FTTransformerConfig(task="classification", input_embed_dim=16, num_heads=2, num_attn_blocks=2),
                     TabNetModelConfig(task="classification", n_d=8, n_a=8)):
    model = TabularModel(data_config=data_config, model_config=model_config,
                         optimizer_config=OptimizerConfig(), trainer_config=trainer_config, verbose=False)
    model.fit(train=train)
    print(type(model_config).__name__, model.evaluate(test, verbose=False))
    print(model.predict(test).head(2))
