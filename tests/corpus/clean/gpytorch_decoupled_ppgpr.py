"""A sparse Gaussian process with gpytorch: a parametric predictive GP
(PredictiveLogLikelihood) whose mean and covariance use separate inducing
points (BatchDecoupledVariationalStrategy, gpytorch's PPGPR example),
trained on minibatches with Adam, then predicting a test set in eval mode.

Each forward solves one triangular system for both inducing sets and keeps
the covariance half of it (`interp_term.select(-3, 1)`) in the output
distribution: the step's output holds the whole solve until the next one.
That is how a tensor gets split, not a leak."""
import math
import os

import gpytorch
import torch

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
STEPS = 40
BATCH = 256


class PPGPR(gpytorch.models.ApproximateGP):
    def __init__(self, inducing_points):
        # The mean's and the covariance's inducing points are a batch of 2 in
        # the last dimension of the kernel's and mean's batch.
        dist = gpytorch.variational.MeanFieldVariationalDistribution(inducing_points.size(-2))
        strategy = gpytorch.variational.BatchDecoupledVariationalStrategy(
            self, inducing_points, dist, learn_inducing_locations=True, mean_var_batch_dim=-1)
        super().__init__(strategy)
        self.mean_module = gpytorch.means.ConstantMean(batch_shape=torch.Size([2]))
        self.covar_module = gpytorch.kernels.ScaleKernel(
            gpytorch.kernels.RBFKernel(batch_shape=torch.Size([2])), batch_shape=torch.Size([2]))

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


def main():
    torch.manual_seed(0)
    train_x = torch.rand(4096, 1, device=DEVICE)
    train_y = torch.sin(train_x[:, 0] * (2 * math.pi)) + 0.1 * torch.randn(4096, device=DEVICE)
    test_x = torch.linspace(0, 1, 1024, device=DEVICE).unsqueeze(-1)

    model = PPGPR(torch.rand(128, 1, device=DEVICE)).to(DEVICE)
    likelihood = gpytorch.likelihoods.GaussianLikelihood().to(DEVICE)
    mll = gpytorch.mlls.PredictiveLogLikelihood(likelihood, model, num_data=train_y.numel())
    opt = torch.optim.Adam([*model.parameters(), *likelihood.parameters()], lr=0.02)

    model.train()
    likelihood.train()
    for step in range(STEPS):
        idx = torch.randint(0, train_y.numel(), (BATCH,), device=DEVICE)
        opt.zero_grad()
        output = model(train_x[idx])
        loss = -mll(output, train_y[idx])
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print("step %d loss %.4f" % (step, loss.item()))

    model.eval()
    likelihood.eval()
    means = []
    with torch.no_grad():
        for chunk in test_x.split(256):
            means.append(likelihood(model(chunk)).mean)
    mean = torch.cat(means)
    err = (mean - torch.sin(test_x[:, 0] * (2 * math.pi))).abs().mean().item()
    print("test mean abs error %.4f" % err)


if __name__ == "__main__":
    main()
