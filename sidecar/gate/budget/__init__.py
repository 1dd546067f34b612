"""The result budget: what a result may cost the model, and what happens to one too big.

`stage` is the chain's charge stage; `charge` judges a result's bytes against the budget;
`shape` is the view the model sees of a payload too big to show whole; `held` keeps such
payloads for `query_result`, and `store` shares them between replicas; `query` (with its
interpreter and meter) answers `query_result` within its own limits.
Nothing is imported here: each module loads when it is used (`query` needs jmespath).
"""
