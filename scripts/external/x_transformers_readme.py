"""x-transformers README usage on random tokens.
usage: x_transformers_readme.py MODE [steps] [seg_len mem_len (xl only)]
  ar   : TransformerWrapper+Decoder wrapped in AutoregressiveWrapper, train, generate(cache_kv) every 10 steps
  xl   : Transformer-XL recurrence (max_mem_len, return_mems=True), mems carried between steps, then generate with XLAutoregressiveWrapper
  xlw  : XLAutoregressiveWrapper training on long sequences split into segments (tbptt), then generate"""
import sys, torch, torch.nn.functional as F
from x_transformers import TransformerWrapper, Decoder
from x_transformers.autoregressive_wrapper import AutoregressiveWrapper
from x_transformers.xl_autoregressive_wrapper import XLAutoregressiveWrapper

NUM_TOKENS = 256

def main():
    mode = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    torch.manual_seed(0)
    if mode == 'ar':
        model = TransformerWrapper(num_tokens=NUM_TOKENS, max_seq_len=128,
                                   attn_layers=Decoder(dim=128, depth=2, heads=4))
        model = AutoregressiveWrapper(model)
        optim = torch.optim.Adam(model.parameters(), lr=1e-4)
        for i in range(steps):
            model.train()
            x = torch.randint(0, NUM_TOKENS, (4, 128))
            loss = model(x)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optim.step(); optim.zero_grad()
            if i % 10 == 0:
                model.eval()
                inp = torch.randint(0, NUM_TOKENS, (1, 32))
                sample = model.generate(prompts=inp, seq_len=32, cache_kv=True)
                print(f'step {i} loss {loss.item():.3f} sample {sample.shape}')
    elif mode == 'xl':
        seg_len = int(sys.argv[3]) if len(sys.argv) > 3 else 64
        mem_len = int(sys.argv[4]) if len(sys.argv) > 4 else 128
        model_xl = TransformerWrapper(num_tokens=NUM_TOKENS, max_seq_len=seg_len, max_mem_len=mem_len,
                                      attn_layers=Decoder(dim=128, depth=2, heads=4, rel_pos_bias=True))
        optim = torch.optim.Adam(model_xl.parameters(), lr=1e-4)
        stream = torch.randint(0, NUM_TOKENS, (2, steps * seg_len + 1))
        mems = None
        for i in range(steps):
            seg = stream[:, i * seg_len:(i + 1) * seg_len + 1]
            inp, labels = seg[:, :-1], seg[:, 1:]
            logits, mems = model_xl(inp, mems=mems, return_mems=True)
            loss = F.cross_entropy(logits.transpose(1, 2), labels)
            loss.backward()
            optim.step(); optim.zero_grad()
            if i % 10 == 0:
                print(f'step {i} loss {loss.item():.3f} mems {[m.shape for m in mems][:1]}')
        xl_wrapper = XLAutoregressiveWrapper(model_xl)
        model_xl.eval()
        prompt = torch.randint(0, NUM_TOKENS, (1, 32))
        out = xl_wrapper.generate(prompt, 96)
        print('generated', out.shape)
    elif mode == 'xlw':
        seg_len = 32
        net = TransformerWrapper(num_tokens=NUM_TOKENS, max_seq_len=seg_len, max_mem_len=64,
                                 attn_layers=Decoder(dim=128, depth=2, heads=4, rel_pos_bias=True))
        model = XLAutoregressiveWrapper(net, tbptt_steps=2)
        optim = torch.optim.Adam(model.parameters(), lr=1e-4)
        for i in range(steps):
            model.train()
            x = torch.randint(0, NUM_TOKENS, (2, 4 * seg_len + 1))
            loss = model(x)
            loss.backward()
            optim.step(); optim.zero_grad()
            if i % 10 == 0:
                model.eval()
                out = model.generate(torch.randint(0, NUM_TOKENS, (1, 16)), 48)
                print(f'step {i} loss {loss.item():.3f} gen {out.shape}')
    else:
        raise SystemExit('bad mode')

if __name__ == '__main__':
    main()
