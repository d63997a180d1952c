# pytorch-metric-learning (pip install pytorch-metric-learning; 2.9.0): TripletMarginLoss with a MultiSimilarityMiner and a CrossBatchMemory
# (its README's loss + miner, and the memory bank), a small embedding net on generated classes.
import torch, torch.nn as nn
from pytorch_metric_learning import losses, miners, distances, reducers
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
opt = torch.optim.Adam(net.parameters(), 1e-3)
centers = torch.randn(10, 32)
miner = miners.MultiSimilarityMiner()
triplet = losses.TripletMarginLoss(margin=0.2, distance=distances.CosineSimilarity(), reducer=reducers.ThresholdReducer(low=0))
xbm = losses.CrossBatchMemory(losses.ContrastiveLoss(), embedding_size=16, memory_size=256, miner=miners.MultiSimilarityMiner())
for step in range(60):
    labels = torch.randint(0, 10, (64,))
    x = centers[labels] + 0.3 * torch.randn(64, 32)
    emb = net(x)
    loss = triplet(emb, labels, miner(emb, labels)) + xbm(emb, labels)
    opt.zero_grad(); loss.backward(); opt.step()
print("loss", loss.item())
