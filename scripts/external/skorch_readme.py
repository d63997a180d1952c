# skorch's README example (pip install skorch), with its callbacks
# (checkpoint, early stopping, LR scheduler, epoch scoring) and a grid search
# over it: python3 skorch_readme.py
import numpy as np, torch
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from skorch import NeuralNetClassifier
from skorch.callbacks import Checkpoint, EarlyStopping, EpochScoring, LRScheduler

X, y = make_classification(2000, 20, n_informative=10, random_state=0)
X, y = X.astype(np.float32), y.astype(np.int64)

class MyModule(torch.nn.Module):
    def __init__(self, num_units=10, nonlin=torch.nn.ReLU()):
        super().__init__()
        self.dense0 = torch.nn.Linear(20, num_units)
        self.nonlin = nonlin
        self.dropout = torch.nn.Dropout(0.5)
        self.dense1 = torch.nn.Linear(num_units, num_units)
        self.output = torch.nn.Linear(num_units, 2)
    def forward(self, X, **kwargs):
        X = self.nonlin(self.dense0(X))
        X = self.dropout(X)
        X = self.nonlin(self.dense1(X))
        return self.output(X)

net = NeuralNetClassifier(MyModule, max_epochs=15, criterion=torch.nn.CrossEntropyLoss(), lr=0.1,
    iterator_train__shuffle=True,
    callbacks=[EpochScoring("roc_auc", lower_is_better=False), Checkpoint(dirname="ckpt"),
               EarlyStopping(patience=5), LRScheduler(policy="StepLR", step_size=5)])
pipe = Pipeline([("scale", StandardScaler()), ("net", net)])
pipe.fit(X, y)
print(pipe.predict_proba(X)[:3])
gs = GridSearchCV(net, {"lr": [0.05, 0.1], "module__num_units": [10, 20]}, refit=False, cv=3, scoring="accuracy")
gs.fit(X, y)
print(gs.best_score_, gs.best_params_)
