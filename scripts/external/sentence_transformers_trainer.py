# sentence-transformers 6.3.0 (pip install sentence-transformers): SentenceTransformerTrainer with MultipleNegativesRankingLoss on a tiny
# BERT (random init) and a word-level tokenizer, an evaluator every 8 steps.
import random, torch
from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments, losses, models as st_models
from sentence_transformers.evaluation import EmbeddingSimilarityEvaluator
words = [f"w{i}" for i in range(300)]
vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, **{w: i + 5 for i, w in enumerate(words)}}
tk = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]")); tk.pre_tokenizer = pre_tokenizers.Whitespace()
tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
cfg = BertConfig(vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, max_position_embeddings=64)
BertModel(cfg).save_pretrained("tiny_bert"); tok.save_pretrained("tiny_bert")
model = SentenceTransformer(modules=[st_models.Transformer("tiny_bert", max_seq_length=32), st_models.Pooling(64, "mean")], device="cpu")
r = random.Random(0)
def s(n): return " ".join(r.choice(words) for _ in range(n))
train = Dataset.from_list([{"anchor": s(8), "positive": s(8)} for _ in range(256)])
ev = EmbeddingSimilarityEvaluator([s(6) for _ in range(32)], [s(6) for _ in range(32)], [r.random() for _ in range(32)])
args = SentenceTransformerTrainingArguments(output_dir="st_out", max_steps=32, per_device_train_batch_size=16, eval_strategy="steps",
                                            eval_steps=8, save_steps=16, logging_steps=4, report_to=[], use_cpu=True)
SentenceTransformerTrainer(model=model, args=args, train_dataset=train, loss=losses.MultipleNegativesRankingLoss(model), evaluator=ev).train()
print("emb", model.encode(["w1 w2 w3"]).shape)
