# The training example of lucidrains/denoising-diffusion-pytorch's README
# (pip install denoising_diffusion_pytorch), shrunk (dim, image size, steps)
# to run on a CPU: python3 ddpm_trainer_readme.py IMAGE_FOLDER (at least 100
# images, the Trainer's own check).
import sys
from denoising_diffusion_pytorch import Unet, GaussianDiffusion, Trainer

model = Unet(dim=16, dim_mults=(1, 2), flash_attn=False)
diffusion = GaussianDiffusion(model, image_size=32, timesteps=50, sampling_timesteps=10)
trainer = Trainer(diffusion, sys.argv[1], train_batch_size=8, train_lr=8e-5, train_num_steps=60,
                  gradient_accumulate_every=2, ema_decay=0.995, amp=False, calculate_fid=False,
                  save_and_sample_every=20, num_samples=4, results_folder="./results")
if len(sys.argv) > 2:
    trainer.load(int(sys.argv[2]))
trainer.train()
