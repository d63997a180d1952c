"""darts 0.48.1 (Lightning underneath) on a generated series: NBEATS, TCN and
an LSTM trained with a validation series, forecasts and historical forecasts.

    python3 scripts/external/darts_models.py
"""
from darts.models import NBEATSModel, RNNModel, TCNModel
from darts.utils.timeseries_generation import gaussian_timeseries, sine_timeseries

series = sine_timeseries(length=400, value_frequency=0.05) + gaussian_timeseries(length=400, std=0.1)
series = series.astype("float32")
train, val = series.split_after(0.8)
for model in (NBEATSModel(input_chunk_length=24, output_chunk_length=12, n_epochs=4, random_state=0),
              TCNModel(input_chunk_length=24, output_chunk_length=12, n_epochs=4, random_state=0),
              RNNModel(model="LSTM", input_chunk_length=24, training_length=36, n_epochs=4, random_state=0)):
    model.fit(train, val_series=val)
    print(type(model).__name__, model.predict(n=24).values()[:3].ravel())
    hf = model.historical_forecasts(series, start=0.8, forecast_horizon=12, retrain=False)
    print(len(hf))
