"""What the embedded AWS runs that is this product's own: the scenarios and their player, the
``local run``/``demo``/``chaos`` result, the digests' and notifications' views, faults and chaos,
and the product registered with the kernel (:mod:`.application`). It may import ``missed_checks``;
the kernel (everything of ``missed_checks_local`` outside this package) imports nothing of it
(``tests/unit/local/test_kernel_layering.py``). The ``missed-checks local`` commands are the
operator's (``missed_checks_ops.cli.local``), which call these entry points."""
