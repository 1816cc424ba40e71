package wasmmeter
