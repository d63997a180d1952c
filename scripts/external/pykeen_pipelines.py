"""PyKEEN's README pipeline (TransE on its bundled Nations), then ComplEx on
Kinships with the LCWA training loop, Adam and early stopping.

    python3 scripts/external/pykeen_pipelines.py
"""
from pykeen.pipeline import pipeline

result = pipeline(model="TransE", dataset="nations")
print("TransE hits@10", result.metric_results.get_metric("hits@10"))
result = pipeline(dataset="kinships", model="ComplEx", training_loop="lcwa", epochs=30, optimizer="Adam",
                  model_kwargs=dict(embedding_dim=64), stopper="early",
                  stopper_kwargs=dict(frequency=5, patience=2))
print("ComplEx hits@10", result.metric_results.get_metric("hits@10"))
