provider "azurerm" {
  features {}
}

resource "azurerm_resource_group" "rg" {
  name     = "shop"
  location = "East US"
}

resource "azurerm_linux_virtual_machine" "web" {
  name                = "web"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  size                = "Standard_D2s_v3"
  os_disk {
    caching              = "ReadWrite"
    storage_account_type = "Premium_LRS"
  }
}

resource "azurerm_windows_virtual_machine" "app" {
  name                = "app"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  size                = "Standard_D2s_v3"
  os_disk {
    caching              = "ReadWrite"
    storage_account_type = "Premium_LRS"
    disk_size_gb         = 127
  }
}

resource "azurerm_virtual_machine" "legacy" {
  name                = "legacy"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  vm_size             = "Standard_DS1_v2"
  os_profile_windows_config {}
  storage_os_disk {
    name              = "legacy-os"
    create_option     = "FromImage"
    managed_disk_type = "Standard_LRS"
    disk_size_gb      = 128
  }
}

resource "azurerm_linux_virtual_machine_scale_set" "workers" {
  name                = "workers"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  sku                 = "Standard_F2s_v2"
  instances           = 3
  os_disk {
    caching              = "ReadWrite"
    storage_account_type = "StandardSSD_LRS"
    disk_size_gb         = 30
  }
}

resource "azurerm_kubernetes_cluster" "aks" {
  name                = "aks"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  sku_tier            = "Standard"
  default_node_pool {
    name                = "system"
    vm_size             = "Standard_D4s_v5"
    enable_auto_scaling = true
    min_count           = 2
    max_count           = 5
  }
}

resource "azurerm_kubernetes_cluster_node_pool" "win" {
  name                  = "win"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_D4s_v3"
  os_type               = "Windows"
  node_count            = 2
}

resource "azurerm_managed_disk" "data" {
  name                 = "data"
  location             = azurerm_resource_group.rg.location
  resource_group_name  = azurerm_resource_group.rg.name
  storage_account_type = "Premium_LRS"
  create_option        = "Empty"
  disk_size_gb         = 100
}

resource "azurerm_managed_disk" "ultra" {
  name                 = "ultra"
  location             = azurerm_resource_group.rg.location
  resource_group_name  = azurerm_resource_group.rg.name
  storage_account_type = "UltraSSD_LRS"
  create_option        = "Empty"
  disk_size_gb         = 100
}

resource "azurerm_storage_account" "logs" {
  name                     = "shoplogs"
  location                 = azurerm_resource_group.rg.location
  resource_group_name      = azurerm_resource_group.rg.name
  account_tier             = "Standard"
  account_replication_type = "LRS"
  access_tier              = "Cool"
}

resource "azurerm_mssql_server" "sql" {
  name                = "shop-sql"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  version             = "12.0"
}

resource "azurerm_mssql_database" "app" {
  name        = "app"
  server_id   = azurerm_mssql_server.sql.id
  sku_name    = "GP_Gen5_2"
  max_size_gb = 32
}

resource "azurerm_mssql_database" "small" {
  name      = "small"
  server_id = azurerm_mssql_server.sql.id
  sku_name  = "S0"
}

resource "azurerm_mssql_database" "pooled" {
  name            = "pooled"
  server_id       = azurerm_mssql_server.sql.id
  elastic_pool_id = azurerm_mssql_elasticpool.pool.id
}

resource "azurerm_mssql_database" "serverless" {
  name      = "serverless"
  server_id = azurerm_mssql_server.sql.id
  sku_name  = "GP_S_Gen5_1"
}

resource "azurerm_postgresql_flexible_server" "pg" {
  name                = "shop-pg"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  sku_name            = "GP_Standard_D2ds_v4"
  storage_mb          = 65536
  high_availability {
    mode = "ZoneRedundant"
  }
}

resource "azurerm_mysql_flexible_server" "my" {
  name                = "shop-mysql"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  sku_name            = "B_Standard_B1ms"
  storage {
    size_gb = 20
  }
}

resource "azurerm_service_plan" "linux" {
  name                = "linux"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  os_type             = "Linux"
  sku_name            = "P1v3"
  worker_count        = 2
}

resource "azurerm_service_plan" "functions" {
  name                = "functions"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  os_type             = "Linux"
  sku_name            = "Y1"
}

resource "azurerm_app_service_plan" "legacy" {
  name                = "legacy"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  kind                = "Windows"
  sku {
    tier     = "Standard"
    size     = "S1"
    capacity = 1
  }
}

resource "azurerm_lb" "front" {
  name                = "front"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  sku                 = "Standard"
}

resource "azurerm_lb" "basic" {
  name                = "basic"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
}

resource "azurerm_public_ip" "front" {
  name                = "front"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  allocation_method   = "Static"
  sku                 = "Standard"
}

resource "azurerm_nat_gateway" "out" {
  name                = "out"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
}

resource "azurerm_nat_gateway_public_ip_association" "out" {
  nat_gateway_id       = azurerm_nat_gateway.out.id
  public_ip_address_id = azurerm_public_ip.front.id
}

resource "azurerm_redis_cache" "cache" {
  name                = "shop-cache"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  sku_name            = "Standard"
  family              = "C"
  capacity            = 1
}

resource "azurerm_cosmosdb_account" "db" {
  name                = "shop-cosmos"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  offer_type          = "Standard"
}

resource "azurerm_cosmosdb_sql_database" "shared" {
  name                = "shared"
  resource_group_name = azurerm_resource_group.rg.name
  account_name        = azurerm_cosmosdb_account.db.name
  throughput          = 400
}

resource "azurerm_cosmosdb_sql_container" "orders" {
  name                = "orders"
  resource_group_name = azurerm_resource_group.rg.name
  account_name        = azurerm_cosmosdb_account.db.name
  database_name       = azurerm_cosmosdb_sql_database.shared.name
  autoscale_settings {
    max_throughput = 4000
  }
}

resource "azurerm_key_vault" "kv" {
  name                = "shop-kv"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  sku_name            = "premium"
}

resource "azurerm_key_vault_key" "hsm" {
  name         = "signing"
  key_vault_id = azurerm_key_vault.kv.id
  key_type     = "RSA-HSM"
  key_size     = 2048
}

resource "azurerm_postgresql_server" "old" {
  name                = "shop-old-pg"
  location            = azurerm_resource_group.rg.location
  resource_group_name = azurerm_resource_group.rg.name
  sku_name            = "B_Gen5_2"
}
