"""The embedded AWS: the stack of ``template.yaml`` on moto, with a local Lambda runtime, Scheduler,
stream poller and clock (README, "Run it locally").

Importing the package makes every botocore session of the process share one data loader
(:func:`missed_checks_local.moto_patches.one_data_loader_per_process`, patch 5i) before moto is
imported: moto opens a new boto3 session to list a service's regions at import and for every
backend it creates, and each parsed botocore's endpoint file and models again (about 1.5 s of CPU
per emulator process).
"""

from missed_checks_local.moto_patches import one_data_loader_per_process

one_data_loader_per_process()
