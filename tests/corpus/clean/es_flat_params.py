"""Evolution strategies on a small policy: the parameters flattened with
parameters_to_vector, perturbed, and written back each step with
vector_to_parameters (which rebinds every parameter's .data to a view of
the vector), as ES and natural-gradient code does."""
import torch
import torch.nn as nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from _device import DEVICE  # cuda on the GPU half


def fitness(policy, obs, target):
    with torch.no_grad():
        return -nn.functional.mse_loss(policy(obs), target).item()


def main():
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 4)).to(DEVICE)
    obs = torch.randn(128, 16, device=DEVICE)
    target = torch.randn(128, 4, device=DEVICE)
    population, sigma, lr = 16, 0.05, 0.02
    for gen in range(12):
        theta = parameters_to_vector(policy.parameters())
        noise = torch.randn(population, theta.numel(), device=DEVICE)
        scores = torch.empty(population, device=DEVICE)
        for i in range(population):
            vector_to_parameters(theta + sigma * noise[i], policy.parameters())
            scores[i] = fitness(policy, obs, target)
        ranks = (scores.argsort().argsort().float() / (population - 1)) - 0.5
        theta = theta + lr / (population * sigma) * (ranks @ noise)
        vector_to_parameters(theta, policy.parameters())
    print("fitness", fitness(policy, obs, target))


if __name__ == "__main__":
    main()
