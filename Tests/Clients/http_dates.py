#!/usr/bin/env python3
"""HTTP dates by Python's email.utils and time (no code of ours): for each Unix time in TIMES (one a line), a line of
the time, its IMF-fixdate, its RFC 850 form, its asctime form, and the time email.utils reads back from the
IMF-fixdate, tab-separated, in OUT.

Usage: http_dates.py TIMES OUT (HTTPDateTests)."""
import email.utils
import sys
import time

with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        t = int(line)
        g = time.gmtime(t)
        imf = email.utils.formatdate(t, usegmt=True)
        rfc850 = time.strftime("%A, %d-%b-%y %H:%M:%S GMT", g)
        asc = time.strftime("%a %b ", g) + ("%2d" % g.tm_mday) + time.strftime(" %H:%M:%S %Y", g)
        out.write("\t".join([str(t), imf, rfc850, asc, str(int(email.utils.parsedate_to_datetime(imf).timestamp()))]) + "\n")
